#!/usr/bin/env python3
"""POST /tokenize on a real `prosgrow serve` (started with --api-key k):
chat, completions and llama.cpp bodies give the tokens the generation
endpoints use; bad bodies are 4xx. usage: tokenize_check.py BASE_URL"""
import json
import sys
import urllib.error
import urllib.request

BASE = sys.argv[1]


def call(path, body=None, key="k", method="POST"):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(BASE + path, data=data, method=method,
                                 headers={"Content-Type": "application/json", **({"Authorization": "Bearer " + key} if key else {})})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


chat = {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour."}]}
s, t = call("/tokenize", chat)
assert s == 200 and t["count"] == len(t["tokens"]) > 0 and t["max_model_len"] > 0, (s, t)
s, r = call("/v1/chat/completions", {**chat, "max_tokens": 1, "temperature": 0})
assert s == 200 and r["usage"]["prompt_tokens"] == t["count"], (t["count"], r.get("usage"))

s, tp = call("/tokenize", {"prompt": "The quick brown fox"})
s2, r = call("/v1/completions", {"prompt": "The quick brown fox", "max_tokens": 1, "temperature": 0})
assert s == 200 and s2 == 200 and r["usage"]["prompt_tokens"] == tp["count"], (tp, r.get("usage"))
s, ids = call("/tokenize", {"prompt": [5, 6, 7]})
assert s == 200 and ids["tokens"] == [5, 6, 7], ids
s, c = call("/tokenize", {"content": "The quick brown fox"})
assert s == 200 and c["count"] > 0, c

for body, want in (({"content": 5}, 400), ({"content": "x", "bogus": 1}, 400), ({}, 400),
                   ({"messages": "no"}, 400), ({"prompt": [999999999]}, 400), (b"{not json", 400)):
    s, e = call("/tokenize", body)
    assert s == want and "error" in e, (body, s, e)
s, e = call("/tokenize", {"content": "x"}, key=None)
assert s == 401, (s, e)
s, e = call("/tokenize", None, method="GET")
assert s == 405, (s, e)
print("tokenize_check: ok")
