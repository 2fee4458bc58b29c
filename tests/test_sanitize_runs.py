"""The sanitize phase's restarts and summary (tools/sanitize_runs.sh), run on the CPU with a stand-in for
compute-sanitizer.

The real tool often dies of SIGSEGV mid-run with no report (benchmarks/NOTES.md 114, 115); `sanitize_part` then
starts it again on the cases not yet passed. These tests check that a case that crashes it every time costs only its
own runs, that a clean run is one run, and that a report is kept and not retried; and that `sanitize_summary` counts a
python that ended abnormally apart from the report lines (NOTES 116).
"""

import os
import subprocess
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"

# Prints each test id it is given the way `pytest -v` does. The id in $CRASH_ON ends the run the way the real tool's
# SIGSEGV does (the id printed, no outcome, exit 139); the id in $REPORT_ON gets a race report, and the run ends with
# the tool's error exit code. Each run's arguments go to $RUNS.
FAKE_SANITIZER = """#!/usr/bin/env bash
echo "$*" >> "$RUNS"
status=0
for arg in "$@"; do
  case "$arg" in
    tests/*)
      if [ "$arg" = "${CRASH_ON:-}" ]; then echo "$arg "; exit 139; fi
      if [ "$arg" = "${REPORT_ON:-}" ]; then echo "========= Error: Race reported between Write access"; status=1; fi
      echo "$arg PASSED [ 50%]" ;;
  esac
done
echo "========= RACECHECK SUMMARY: 0 hazards displayed"
exit $status
"""

IDS = [f"tests/test_example.py::test_case[shape{i}-bf16]" for i in range(6)]


def run_part(tmp_path, **env):
    """sanitize_part over IDS with the fake sanitizer: (its summary line, the part's log, each run's arguments)."""
    fake = tmp_path / "compute-sanitizer"
    fake.write_text(FAKE_SANITIZER)
    fake.chmod(0o755)
    ids = tmp_path / "racecheck.ids_00"
    ids.write_text("\n".join(IDS) + "\n")
    runs = tmp_path / "runs.txt"
    script = (
        'quiet() { cat; }; sanitizer_args="--kernel-name kns=jdg"; '
        f'source "{TOOLS / "sanitize_runs.sh"}"; sanitize_part racecheck "{ids}" 60'
    )
    environment = dict(os.environ, CS=str(fake), OUT=str(tmp_path), RUNS=str(runs), **env)
    done = subprocess.run(["bash", "-c", script], env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), (tmp_path / "racecheck.log_00").read_text(), runs.read_text().splitlines()


def passed(log):
    return {line.split()[0] for line in log.splitlines() if line.endswith("PASSED [ 50%]")}


@pytest.mark.parametrize("crasher", [0, 3, 5])
def test_a_case_that_always_crashes_the_tool_lets_the_others_run(tmp_path, crasher):
    summary, log, runs = run_part(tmp_path, CRASH_ON=IDS[crasher])
    assert passed(log) == set(IDS) - {IDS[crasher]}
    # after the first crash the crasher runs last (a second run when others were left), then alone until 20 runs in
    # a row have passed nothing
    expected_runs = 1 + (crasher < len(IDS) - 1) + 20
    assert summary == f"racecheck part 00: exit 139 after {expected_runs} sanitizer run(s), 1 case(s) not passed"
    assert len(runs) == expected_runs
    assert f"pytest {' '.join(IDS[crasher + 1:] + [IDS[crasher]])} -v" in runs[1]
    assert all(f"pytest {IDS[crasher]} -v" in run for run in runs[2:])


def test_a_clean_run_is_one_run_with_the_options_in_force(tmp_path):
    summary, log, runs = run_part(tmp_path)
    assert passed(log) == set(IDS)
    assert summary == "racecheck part 00: exit 0 after 1 sanitizer run(s), 0 case(s) not passed"
    assert runs == [f"--tool racecheck --error-exitcode 1 --kernel-name kns=jdg python -I -m pytest {' '.join(IDS)} "
                    "-v -p no:cacheprovider --basetemp=/tmp/jdg-sanitize-racecheck-00"]


def test_a_report_is_kept_and_not_retried(tmp_path):
    summary, log, runs = run_part(tmp_path, REPORT_ON=IDS[2])
    assert "========= Error: Race reported" in log
    assert summary == "racecheck part 00: exit 1 after 1 sanitizer run(s), 0 case(s) not passed"
    assert len(runs) == 1


def summarize(tmp_path, log):
    """sanitize_summary over a racecheck log of two selected cases: its output lines."""
    (tmp_path / "racecheck.ids").write_text("\n".join(IDS[:2]) + "\n")
    (tmp_path / "racecheck.log").write_text(log)
    script = f'source "{TOOLS / "sanitize_runs.sh"}"; sanitize_summary racecheck'
    done = subprocess.run(["bash", "-c", script], env=dict(os.environ, OUT=str(tmp_path)), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


# The lines the real tool printed in session 73 when python crashed at exit after its case had passed.
ENDED_ABNORMALLY = (
    f"# sanitizer run 1 of part 00: exit 11\n{IDS[0]} PASSED [100%]\n"
    "========= Error: process didn't terminate successfully\n"
    "=========     The application may have hit an error when dereferencing Unified Memory from the host.\n"
    "========= Target application returned an error\n"
    "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
)


def test_an_abnormal_python_exit_is_counted_apart_from_reports(tmp_path):
    lines = summarize(tmp_path, ENDED_ABNORMALLY)
    assert lines[0] == "racecheck: 1 of the 2 selected cases passed under the sanitizer (1 sanitizer runs)"
    assert "racecheck: 0 report line(s) over all runs" in lines
    assert lines[-1] == "racecheck: 1 run(s) whose python ended abnormally (no access reported)"


def test_a_race_is_a_report_line_beside_an_abnormal_exit(tmp_path):
    race = (f"# sanitizer run 1 of part 01: exit 1\n{IDS[1]} PASSED [100%]\n"
            "========= Error: Race reported between Write access at jdg_fp8_gemm+0x1a0\n"
            "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n")
    lines = summarize(tmp_path, ENDED_ABNORMALLY + race)
    assert lines[0] == "racecheck: 2 of the 2 selected cases passed under the sanitizer (2 sanitizer runs)"
    assert "racecheck: 2 report line(s) over all runs" in lines  # the race and its summary
    assert "========= Error: Race reported between Write access at jdg_fp8_gemm+0x1a0" in lines
    assert lines[-1] == "racecheck: 1 run(s) whose python ended abnormally (no access reported)"
