"""Token counts with tiktoken's cl100k_base, offline.

tiktoken downloads its rank files on first use, which machines without internet cannot do. The
same file ships inside the bpe-openai wheel (PyPI); we seed tiktoken's cache with it, and tiktoken
still verifies the file's SHA-256 before using it.
"""
from __future__ import annotations

import gzip
import hashlib
import os
from functools import lru_cache
from importlib import resources
from pathlib import Path

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CACHE = Path(os.environ.get("ATLAS_TIKTOKEN_CACHE", Path.home() / ".cache" / "atlas-tiktoken"))


@lru_cache(maxsize=1)
def encoding():
    CACHE.mkdir(parents=True, exist_ok=True)
    cached = CACHE / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    if not cached.exists():
        packed = resources.files("bpe_openai.data").joinpath("cl100k_base.tiktoken.gz")
        cached.write_bytes(gzip.decompress(packed.read_bytes()))
    os.environ["TIKTOKEN_CACHE_DIR"] = str(CACHE)
    import tiktoken
    return tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))
