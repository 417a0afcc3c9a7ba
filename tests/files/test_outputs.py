"""Output files: refused before anything runs, written as one unit, no temporaries left behind."""

from __future__ import annotations

import os
import signal
import tempfile

import pytest

from synthdp.core.errors import InputError
from synthdp.files.outputs import Interrupted, OutputError, check_outputs, write_outputs


def snapshot(folder):
    """Every entry of ``folder`` (hidden ones too) with its content, to compare before and after."""
    return {p.name: (p.read_bytes() if p.is_file() and not p.is_symlink() else os.readlink(p) if p.is_symlink()
                     else "dir") for p in folder.iterdir()}


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "in.csv").write_text("a\n1\n")
    (tmp_path / "old.csv").write_text("old\n")
    (tmp_path / "sub").mkdir()
    return tmp_path


@pytest.mark.parametrize("make, match", [
    (lambda d: d / "sub", "is a directory"),
    (lambda d: d / "in.csv", "is the input file"),
    (lambda d: d / "missing" / "x.csv", "does not exist; create it first"),
    (lambda d: "", "empty string"),
    (lambda d: (os.mkfifo(d / "fifo"), d / "fifo")[1], "FIFO"),
    (lambda d: "/dev/null", "is a device"),
    (lambda d: (os.symlink(d / "in.csv", d / "to-in"), d / "to-in")[1], "is the input file"),
    (lambda d: (os.symlink(d / "sub", d / "to-dir"), d / "to-dir")[1], "through the symbolic link"),
    (lambda d: (os.symlink(d / "nothing", d / "dangling"), d / "dangling")[1], "does not exist"),
])
def test_bad_output_paths_are_refused_and_nothing_changes(folder, make, match):
    path = make(folder)
    before = snapshot(folder)
    with pytest.raises(InputError, match=match):
        check_outputs({"-o": path}, inputs=[folder / "in.csv"])
    assert snapshot(folder) == before


def test_two_outputs_naming_one_file_are_refused(folder):
    with pytest.raises(InputError, match="-o and --report both name"):
        check_outputs({"-o": folder / "x.csv", "--report": str(folder / "sub" / ".." / "x.csv")})


def test_unwritable_folder_is_refused(folder, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)  # root can write anywhere: simulate a read-only folder
    with pytest.raises(InputError, match="cannot write in the folder .*Permission denied"):
        check_outputs({"--report": folder / "r.json"})


def test_symlink_to_a_regular_file_is_written_through(folder):
    os.symlink(folder / "old.csv", folder / "link.csv")
    outs = check_outputs({"-o": folder / "link.csv"})
    write_outputs([(outs["-o"], lambda tmp: tmp.write_text("new\n"))])
    assert os.path.islink(folder / "link.csv") and (folder / "old.csv").read_text() == "new\n"


def test_all_outputs_appear_together_with_the_usual_permissions(folder):
    outs = check_outputs({"-o": folder / "a.csv", "--report": folder / "old.csv"})
    write_outputs([(outs["-o"], lambda tmp: tmp.write_text("A")), (outs["--report"], lambda tmp: tmp.write_text("B"))])
    assert (folder / "a.csv").read_text() == "A" and (folder / "old.csv").read_text() == "B"
    umask = os.umask(0)
    os.umask(umask)
    assert (folder / "a.csv").stat().st_mode & 0o777 == 0o666 & ~umask
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), Interrupted(signal.SIGTERM)])
def test_a_failing_second_output_leaves_no_file_and_old_files_untouched(folder, failure):
    outs = check_outputs({"-o": folder / "a.csv", "--report": folder / "old.csv"})
    before = snapshot(folder)

    def fail(tmp):
        tmp.write_text("half")
        raise failure

    with pytest.raises(OutputError if isinstance(failure, OSError) else Interrupted) as info:
        write_outputs([(outs["-o"], lambda tmp: tmp.write_text("A")), (outs["--report"], fail)])
    if isinstance(failure, OSError):
        assert "--report" in str(info.value) and "No space left" in str(info.value)
    assert snapshot(folder) == before


def test_a_failing_rename_restores_the_earlier_outputs(folder, monkeypatch):
    outs = check_outputs({"-o": folder / "old.csv", "--report": folder / "b.json"})
    before = snapshot(folder)
    real_replace = os.replace

    def replace(src, dst):
        if str(dst).endswith("b.json"):
            raise OSError(5, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OutputError, match="renaming the outputs"):
        write_outputs([(outs["-o"], lambda tmp: tmp.write_text("new")), (outs["--report"], lambda tmp: tmp.write_text("B"))])
    assert snapshot(folder) == before


def test_a_signal_during_the_renames_is_held_until_all_are_in_place(folder):
    outs = check_outputs({"-o": folder / "a.csv", "--report": folder / "b.json"})

    def raise_interrupted(signum, frame):
        raise Interrupted(signum)

    previous = signal.signal(signal.SIGTERM, raise_interrupted)
    real_replace = os.replace
    sent = []

    def replace(src, dst):
        if not sent:  # the signal arrives between the two renames
            sent.append(True)
            os.kill(os.getpid(), signal.SIGTERM)
        real_replace(src, dst)

    try:
        os.replace = replace
        with pytest.raises(Interrupted) as info:
            write_outputs([(outs["-o"], lambda tmp: tmp.write_text("A")),
                           (outs["--report"], lambda tmp: tmp.write_text("B"))])
    finally:
        os.replace = real_replace
        signal.signal(signal.SIGTERM, previous)
    assert info.value.written
    assert (folder / "a.csv").read_text() == "A" and (folder / "b.json").read_text() == "B"
