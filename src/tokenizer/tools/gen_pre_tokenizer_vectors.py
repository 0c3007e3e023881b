#!/usr/bin/env python3
"""Generates src/tokenizer/testdata/pre_tokenizer_vectors.json: how llama.cpp
splits a set of tricky texts into words, for one tokenizer.ggml.pre name of
every pre-tokenizer kind. pre_tokenizer_vectors_test.cc checks prosgrow's
hand-written scanners against it.

This is an independent model of llama.cpp's unicode_regex_split: its regex
lists run through Python's backtracking `re` (leftmost alternative first, as
the ECMAScript std::regex llama.cpp uses) over the same "collapsed" text:
ASCII kept as is, other whitespace as U+000B, other code points replaced by
one stand-in per general category, and \\p{..} rewritten to the stand-in plus
llama.cpp's ASCII list for that category. Regexes without \\p{..} run on the
original text with non-ASCII whitespace as U+000B. Matches and the gaps
between them both become pieces. Where llama.cpp uses a hand-written scanner
instead of std::regex (GPT-2, Llama 3, Kimi K2), the regex that scanner
implements is run instead; afmoe's digit scanner is modelled directly.

Usage (from the repository root; Python 3.11, whose Unicode 14 data matches
unicode_data.cc):
  python3 src/tokenizer/tools/gen_pre_tokenizer_vectors.py > src/tokenizer/testdata/pre_tokenizer_vectors.json
"""
import json
import random
import re
import unicodedata

WHITESPACE = {9, 10, 11, 12, 13, 32, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000}
WHITESPACE.update(range(0x2000, 0x200B))
STAND_IN = {"N": "\xd1", "L": "\xd2", "P": "\xd3", "M": "\xd4", "S": "\xd5"}  # other: \xd0
ASCII_OF = {"N": "0-9", "L": "A-Za-z", "P": "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}", "M": "",
            "S": "\\$\\+<->\\^`\\|"}
CLASSES = {"\\p{N}": "N", "\\p{L}": "L", "\\p{P}": "P", "\\p{M}": "M", "\\p{S}": "S",
           "\\p{Lu}": "L", "\\p{Ll}": "L", "\\p{Lt}": "L", "\\p{Lm}": "L", "\\p{Lo}": "L"}
HAN_STAND_IN = "\xd6"  # kimi-k2 only: Han letters apart from other letters


def is_han(c):
    return (0x4E00 <= c <= 0x9FFF or 0x3400 <= c <= 0x4DBF or 0x20000 <= c <= 0x2A6DF or
            0x2A700 <= c <= 0x2EBEF or 0xF900 <= c <= 0xFAFF or 0x2F800 <= c <= 0x2FA1F)


def collapse_text(cps, han_apart=False):
    out = []
    for c in cps:
        if c < 128:
            out.append(chr(c))
        elif c in WHITESPACE:
            out.append("\x0b")
        elif han_apart and is_han(c):
            out.append(HAN_STAND_IN)
        else:
            out.append(STAND_IN.get(unicodedata.category(chr(c))[0], "\xd0"))
    return "".join(out)


def collapse_regex(rx):
    out, inside, i = "", False, 0
    while i < len(rx):
        if rx[i] == "[" and (i == 0 or rx[i - 1] != "\\"):
            out, inside, i = out + "[", True, i + 1
            continue
        if inside and rx[i] == "]" and rx[i - 1] != "\\":
            out, inside, i = out + "]", False, i + 1
            continue
        if rx.startswith("\\p{", i):
            j = rx.index("}", i)
            k = CLASSES[rx[i:j + 1]]
            body = STAND_IN[k] + ASCII_OF[k]
            out += body if inside else "[" + body + "]"
            i = j + 1
            continue
        out += rx[i]
        i += 1
    return out


def split_by(pattern, text, offsets):
    new, start = [], 0
    for off in offsets:
        seg, last = text[start:start + off], 0
        for m in pattern.finditer(seg):
            if m.start() > last:
                new.append(m.start() - last)
            if m.end() > m.start():
                new.append(m.end() - m.start())
            last = m.end()
        if last < off:
            new.append(off - last)
        start += off
    return new


def afmoe_digits(cps, offsets):
    """llama.cpp's afmoe digit scanner: a run of n digits is cut after n % 3
    and then every 3; the text before a run stays in its first piece."""
    new, start = [], 0
    for off in offsets:
        prev, pos, end = start, start, start + off
        def emit(e):
            nonlocal prev
            if e > prev:
                new.append(e - prev)
            prev = e
        while pos < end:
            if unicodedata.category(chr(cps[pos]))[0] != "N":
                pos += 1
                continue
            run = pos
            while pos < end and unicodedata.category(chr(cps[pos]))[0] == "N":
                pos += 1
            cut = run + (pos - run) % 3
            if cut > run:
                emit(cut)
            while cut < pos:
                cut += 3
                emit(cut)
        emit(end)
        start = end
    return new


def split(cps, regexes):
    offsets = [len(cps)] if cps else []
    plain = "".join("\x0b" if c > 0x7F and c in WHITESPACE else chr(c) for c in cps)
    for rx in regexes:
        if rx == "AFMOE_DIGITS":
            offsets = afmoe_digits(cps, offsets)
        elif HAN_STAND_IN in rx:
            offsets = split_by(re.compile(rx, re.ASCII), collapse_text(cps, True), offsets)
        elif any(k in rx for k in CLASSES):
            offsets = split_by(re.compile(collapse_regex(rx), re.ASCII), collapse_text(cps), offsets)
        else:
            offsets = split_by(re.compile(rx, re.ASCII), plain, offsets)
    return offsets


# The regex lists of llama-vocab.cpp (llm_tokenizer_bpe), by kind.
C = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
WORD = C + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}DIGITS| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
LLAMA3 = WORD.replace("DIGITS", "{1,3}")
QWEN2 = WORD.replace("DIGITS", "")
DSV3 = (r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
        r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPARK = (r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
         r"| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+")
CJK = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
AFMOE_ASIAN = ("[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\u3040-\u309f\u30a0-\u30ff\uff65-\uff9f"
               "\u2f00-\u2fdf\u0e40-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f\uaa60-\uaa7f"
               "\ua9e0-\ua9ff\uac00-\ud7af\u1100-\u11ff]+")


def cased(upper, lower, contraction, digits):
    lead = r"[^\r\n\p{L}\p{N}]?"
    if contraction:
        contraction += "?"
    return (lead + upper + "*" + lower + "+" + contraction + "|" + lead + upper + "+" + lower + "*" +
            contraction + r"|\p{N}" + digits + r"| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")


UP, LO = r"((?=[\p{L}])([^a-z]))", r"((?=[\p{L}])([^A-Z]))"
UPM, LOM = r"((?=[\p{L}\p{M}])([^a-z]))", r"((?=[\p{L}\p{M}])([^A-Z]))"
BLIND_UP, BLIND_LO = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
PORO = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"
KIMI = ("\xd6+|[^\\r\\n\xd2A-Za-z\xd6\xd10-9]?[\xd2A-Za-z]+" + C + "?|[\xd10-9]{1,3}"
        "| ?[^\\s\xd2A-Za-z\xd6\xd10-9]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")

KINDS = {
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"],
    "gpt-2": [GPT2],
    "starcoder": [r"\p{N}", GPT2],
    "llama-bpe": [LLAMA3],
    "jais-2": [C + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
               r"|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)"
               r"|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}"],
    "qwen2": [QWEN2],
    "bailingmoe": [r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                   r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"],
    "qwen35": [C + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "seed-coder": [C + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "ufakzeka": [r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "laguna": [r"[^\n]+|[\n]+", QWEN2],
    "minicpm5": [r"\p{N}{1,3}", WORD.replace("DIGITS", "+")],
    # deepseek-llm's long literal letter class is covered by the vocab fixtures.
    "deepseek-coder": ["[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+",
                       r"\p{N}"],
    "deepseek-v3": [r"\p{N}{1,3}", CJK, DSV3],
    "spark2_5": [r"\p{N}{1,3}", CJK, SPARK, r"\p{N}"],
    "afmoe": ["AFMOE_DIGITS", AFMOE_ASIAN, DSV3],
    "falcon": [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"],
    "gpt-4o": [cased(UP, LO, C, "{1,3}")],
    "granite-embed-multi-97m": [cased(UPM, LOM, C, "{1,3}")],
    "tekken": [cased(UP, LO, "", "")],
    "youtu": ["[\uac00-\ud7a3\u3131-\u318e]+|[\uff01\u2026\u201c\u201d\u2018\u2019\u2014\uff1a\uff1b"
              "\uff0c\u3001-\u303f\ufe30-\ufe4f]+|[\u3105-\u312f]+|[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
              cased(BLIND_UP, BLIND_LO, C, "")],
    "tiny_aya": [r"\d{1,3}(?=(?:\d{3})*\b)", cased(BLIND_UP, BLIND_LO, C, "{1,3}")],
    "kimi-k2": [KIMI],
    "exaone-moe": [C + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"
                   r"| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"],
    "poro-chat": [PORO],
    "viking": [PORO, r"\p{N}"],
    "superbpe": [r"\p{N}+", r"(?=(\d{3})+(?!\d))"],
    "chameleon": ["<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", r"\p{N}",
                  r"[\p{P}!-/:-@\[-`{-~]", GPT2],
}

CURATED = [
    "Hello world", " leading and trailing spaces  ", "tabs\tand\nnew\r\nlines\n\n\n",
    "Gr\u00fc\u00dfe aus M\u00fcnchen! \u6771\u4eac\u306f\u6674\u308c\u3067\u3059\u3002 \U0001F680\U0001F525 \u2014 \u00abquotes\u00bb",
    "code: for (int i = 0; i < 10; ++i) { x += i * 3.14; }",
    "numbers 1234567890 and 3.3 and 33,333 x12345y _123_ 1_000 123456 1234567 12 1",
    "I've been 'told he's there, 'RE you sure? 'M not sure I'll make it DON'T",
    "HelloWorld HTTPServer iPhone's \u00c9COLE \u00e9cole \u00c0\u00c9\u00ce\u00f5\u00fc stra\u00dfe \u01c5emal",
    "e\u0301te \u0301\u0301x \u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e",
    "\uc548\ub155\ud558\uc138\uc694\uff01\u4f60\u597d \u3105\u3106 \u3042\u308a\u304c\u3068\u3046 \u4e00\u4e8c\u4e09",
    "a~~b ~x $y ^z `q` |p| <tag attr=\"v\">", "a            b", "a     ", "   \n  \n x",
    "x //\n\ny a.\n\nb", "T\u00fcrkiye'de we'llx", "a \n b", "\u00a0\u2003nbsp\u3000ideo", "tab\t\tx \t y",
    "\u0663\u0664\u0665 \u0661\u0662 \u00bd \u216b", "a|b||c  c\u2026d \u3002\uff0c\u3001\u0964\u06d4\u060c",
    "\x01\x02ctrl\x7f", "   ", "\n", " ", "'s 'S 'll 'LL 'x", "url http://a.b/c?d=e&f=g#h",
    "emoji \U0001F44D\U0001F3FD family \U0001F468\u200d\U0001F469\u200d\U0001F467", "\r\r\n\r", "a.\r\n b",
    "aIMGIMGABZ<sentinel:12> IMGIMGABCDEZ IMGIMGAZ<sentinel:>", "x,.y 12\t\tz     w",
    "1234 apples, 12 pears", "7", "123456789x 12",
    "Hello\u4e16\u754c it's \u4e2d\u6587abc 12345 \uf900x ", "abc12345 x a  12 \u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35",
]
PALETTE = (list("aAbBzZsStTdDmMlLvVreE0123456789 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\t\n\r") +
           ["\u00e9", "\u00c9", "\u00df", "\u01c5", "\u0301", "\u0947", "\u4e16", "\u754c", "\u3042",
            "\u30ab", "\uc548", "\u3105", "\uff01", "\uff0c", "\u3002", "\u2026", "\U0001F44D", "\u00a0",
            "\u3000", "\u0663", "\u00bd", "\u216b", "\x01", "\u200b", "\u02b0", "\u0e2a", "\u0e31", "'s",
            "'LL", "  ", "   ", "\n\n", " \n", "IMGIMG", "<sentinel:"])


def main():
    rng = random.Random(20261201)
    texts = CURATED + ["".join(rng.choice(PALETTE) for _ in range(rng.randint(1, 24))) for _ in range(120)]
    splits = {}
    for name, regexes in KINDS.items():
        splits[name] = [split([ord(ch) for ch in t], regexes) for t in texts]
    # One text, or one kind's splits of every text, per line: reviewable diffs.
    dump = lambda v: json.dumps(v, separators=(",", ":"))
    lines = ['{"generator": "src/tokenizer/tools/gen_pre_tokenizer_vectors.py",', '"texts": [']
    lines.append(",\n".join(dump(t) for t in texts))
    lines.append('],\n"splits": {')
    lines.append(",\n".join(dump(name) + ": " + dump(v) for name, v in splits.items()))
    lines.append("}}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
