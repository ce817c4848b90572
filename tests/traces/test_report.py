"""The HTML report: self-contained, rendered by headless Chromium (with a screenshot), and the
markdown summary beside it."""

import os
import shutil
import subprocess

import pytest

from tests.traces.known_store import build
from traces.report import write_report

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium must be installed in CI (.ci/run installs Debian's chromium package)")
        pytest.skip("Chromium is not installed")
    return path


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    store = build(folder / "t.db")
    html, markdown = write_report(store, "r", folder / "out")
    store.close()
    return html, markdown


def test_report_is_self_contained_and_complete(report):
    html, markdown = report
    text = html.read_text()
    assert text.count("data:image/png;base64,") >= 3, "plots are embedded"
    assert "http://" not in text and "https://" not in text and "<script" not in text
    for fragment in ("Per round", "Rescued kernels", "Verdict transitions", "By category", "what chain correctness depends on",
                     "Reduce/sum · A · sample 0", "diff from its parent", "By round", "Denominator: chains of that level"):
        assert fragment in text
    summary = markdown.read_text()
    assert "| 0 | 12 | 75.0% | 58.3% |" in summary and "| rescued | 4 | 1.050 (4 timed) |" in summary


def test_report_renders_in_headless_chromium(report, tmp_path):
    browser = chromium()
    html, _ = report
    dom = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                          html.as_uri()], capture_output=True, text=True, timeout=120)
    assert "agentloop run" in dom.stdout and "correct at round 0" in dom.stdout, dom.stderr[-2000:]
    shot = tmp_path / "report.png"
    subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile2'}", f"--screenshot={shot}",
                    "--window-size=1280,1600", html.as_uri()], capture_output=True, timeout=120)
    import matplotlib.image
    pixels = matplotlib.image.imread(str(shot))
    assert pixels.shape[0] >= 1000 and pixels.shape[1] == 1280
    assert pixels.std() > 0.05, "the page is not blank"
    keep = os.environ.get("AGENTLOOP_SCREENSHOT_DIR")
    if keep:
        shutil.copy(shot, keep)


def test_counts_are_readable_on_every_cell_of_the_transition_matrix():
    from traces.report import count_colour
    assert count_colour(5, 5) == "white" and count_colour(3, 5) == "white"  # dark cells
    assert count_colour(2, 5) == "black" and count_colour(0, 5) == "black" and count_colour(0, 0) == "black"
