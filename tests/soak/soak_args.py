"""tests/soak/soak_args.py: the command line both soak legs (soak.py, stream_soak.py) take: their length, --seed
(SOAK_SEED) and -v."""

import argparse
import os


def soak_args(doc, length, env, default, also=None):
    """Parses argv for a soak whose module docstring is doc and whose length is --LENGTH (env, else default):
    (length, seed, verbose); the seed is --seed, else SOAK_SEED, else a random one. also=(LENGTH2, env2,
    default2): a second length, returned fourth."""
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--" + length, type=int, default=int(os.environ.get(env) or default))
    p.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED") or 0) or None)
    if also:
        p.add_argument("--" + also[0], type=int, default=int(os.environ.get(also[1]) or also[2]))
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args()
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "big")
    if also:
        return getattr(a, length), seed, a.verbose, getattr(a, also[0].replace("-", "_"))
    return getattr(a, length), seed, a.verbose
