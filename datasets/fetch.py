"""Download the public benchmark tables into a user cache, each checked against a pinned checksum.

For users without the shared data folder: ``fetch("nltcs")`` downloads the
files of a benchmark table from its public source into
:func:`cache_dir` (``$SYNTHDP_CACHE_DIR``, else the system's user cache),
checks each against the SHA-256 pinned in :data:`REGISTRY` (a file that does
not match is deleted and refused), and returns the folder.  The loaders of
:mod:`synthdp.datasets.benchmarks` read that folder when ``SYNTHDP_DATA_DIR`` is
unset and ``../shared/datasets`` does not exist.  Downloads go through pooch;
``mirror`` takes the files from another folder URL instead (``file://`` too,
which is what the tests use: they never touch the network).

The public domain files (``<name>-domain.json``, private-pgm's format) of the
PrivMRF tables are not published upstream in that format: their sizes, a
public code book of the encoding, are pinned here and written beside the
downloaded table.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping
from urllib.parse import unquote, urlparse

from synthdp.core.errors import InputError

__all__ = ["CACHE_DIR_ENV", "REGISTRY", "RemoteFile", "cache_dir", "fetch"]

CACHE_DIR_ENV = "SYNTHDP_CACHE_DIR"

_PGM = "https://raw.githubusercontent.com/ryan112358/private-pgm/master/data/"
_PRIVMRF = "https://raw.githubusercontent.com/caicre/PrivMRF/main/data/"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"


@dataclass(frozen=True)
class RemoteFile:
    """One public file: the name it is stored under, where it is downloaded from, and its pinned SHA-256."""

    name: str
    url: str
    sha256: str


#: The files of each benchmark table, with their public sources and checksums.
REGISTRY: dict[str, tuple[RemoteFile, ...]] = {
    "adult": (
        RemoteFile("adult.csv", _PGM + "adult.csv",
                   "de1b8341b65de6081d50863b9c15b90ed976e7e47322a7efc37968db98705400"),
        RemoteFile("adult-domain.json", _PGM + "adult-domain.json",
                   "734f07d75cbc2acbe711984e6db520b3e95c9c727cf448c528ce0b38347bb147"),
    ),
    "nltcs": (RemoteFile("nltcs.csv", _PRIVMRF + "nltcs.csv",
                         "31d23617ba74786d2d163c9c31a841e11e5a5f5f8266918d8021ec4e562684b4"),),
    "acs": (RemoteFile("acs.csv", _PRIVMRF + "acs.csv",
                       "89e337a3431f9b3f76d84142cb048495fec93ff10018b1f38b25a19491582cc8"),),
    "br2000": (RemoteFile("br2000.csv", _PRIVMRF + "br2000.csv",
                          "63d851b4cd7ee5ad18e346739f28013316aa575550a32b5841ebcd9566cddb71"),),
    "adult-raw": (
        RemoteFile("adult-raw.data", _UCI + "adult.data",
                   "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"),
        RemoteFile("adult-raw.test", _UCI + "adult.test",
                   "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05"),
    ),
}

#: Public domain sizes of the PrivMRF encodings, written as ``<name>-domain.json`` after the download.
DOMAINS: dict[str, Mapping[str, int]] = {
    "nltcs": {str(i): 2 for i in range(16)},
    "acs": {str(i): 2 for i in range(23)},
    "br2000": dict(zip(map(str, range(14)), (2, 7, 22, 10, 16, 2, 2, 2, 2, 4, 16, 2, 16, 2))),
}


def cache_dir() -> Path:
    """Where :func:`fetch` stores the files: ``$SYNTHDP_CACHE_DIR``, else the user cache of the system."""
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV]).expanduser()
    import pooch

    return Path(pooch.os_cache("synthdp"))


def _download(url: str, output_file: str, pooch_obj) -> None:
    """pooch's downloader for ``https://`` and ``ftp://``, and a plain copy for ``file://`` URLs."""
    import pooch

    parsed = urlparse(url)
    if parsed.scheme == "file":
        shutil.copyfile(unquote(parsed.path), output_file)
    else:
        pooch.downloaders.choose_downloader(url)(url, output_file, pooch_obj)


def fetch(name: str, *, mirror: str | None = None, folder: str | os.PathLike | None = None) -> Path:
    """Download the benchmark table ``name`` (a key of :data:`REGISTRY`) and return the folder holding it.

    Files already in the cache with the right checksum are not downloaded
    again.  ``mirror`` is a folder URL to take the files from instead of
    their public sources (the file names of :data:`REGISTRY` appended);
    ``folder`` overrides :func:`cache_dir`.  A download that fails or does
    not match its pinned checksum raises :class:`InputError` naming the
    file, and leaves no file of that name in the cache.
    """
    import pooch

    if name not in REGISTRY:
        raise InputError(f"unknown benchmark table {name!r}; choose one of {sorted(REGISTRY)}")
    root = Path(folder).expanduser() if folder is not None else cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    for remote in REGISTRY[name]:
        url = mirror.rstrip("/") + "/" + remote.name if mirror else remote.url
        try:
            pooch.retrieve(url, known_hash=f"sha256:{remote.sha256}", fname=remote.name, path=root,
                           downloader=_download, progressbar=False)
        except ValueError as exc:  # pooch: the checksum does not match (the file is removed)
            raise InputError(f"{remote.name} from {url} does not match its pinned checksum ({exc}); nothing was "
                             "kept. Try again later, or set SYNTHDP_DATA_DIR to a folder holding the files") from None
        except OSError as exc:
            raise InputError(f"cannot download {remote.name} from {url}: {exc}; set SYNTHDP_DATA_DIR to a folder "
                             "holding the files instead") from None
    if name in DOMAINS:
        domain = root / f"{name}-domain.json"
        tmp = domain.with_name(f".{domain.name}.tmp")
        tmp.write_text(json.dumps(dict(DOMAINS[name])))
        os.replace(tmp, domain)
    return root
