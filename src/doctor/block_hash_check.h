// The "block hashes" line of `prosgrow doctor` (and serve's preflight):
// whether the KV block hashes are keyed with a fleet secret, and where they
// leave the process (KV events, Redis key names, disk file names). Unkeyed
// hashes are SHA-256 over the model identity, the tenant and the tokens: a
// reader who knows the model and a tenant can test a guessed prompt against
// them. Thread-safety: a pure function of its argument.
#pragma once

#include "doctor/check.h"

namespace pg {

struct BlockHashExposure {
  bool keyed = false;      // --kv-hash-secret-file / PROSGROW_KV_HASH_SECRET given
  bool kv_events = false;  // --kv-events: hashes on the event stream
  bool kv_remote = false;  // --kv-remote: hashes in Redis key names
  bool disk = false;       // --kv-disk-dir: hashes in file names
};

// Ok when keyed, or when unkeyed hashes stay in the process (the line says
// so); a warning, with the flag that fixes it, when unkeyed hashes leave it.
CheckResult CheckBlockHashes(const BlockHashExposure& e);

}  // namespace pg
