"""Kept scenarios (tests/support/scenarios.py): replayed only while nothing changed, never from an earlier run on
CI, and every replay from an earlier run named in the run's summary."""
from tests.support import scenarios
from tests.support.testrun import VARIABLE


def test_an_outcome_is_replayed_within_its_run_and_from_an_earlier_one_only_off_ci(tmp_path, monkeypatch):
    monkeypatch.setattr(scenarios, "SCENARIOS", tmp_path / "scenarios")
    made = []

    def make(folder):
        made.append(folder)
        return {"seen": len(made)}

    for run in ("run-1", "run-2", "run-3"):
        (tmp_path / run).mkdir()
    monkeypatch.setenv(VARIABLE, str(tmp_path / "run-1"))
    monkeypatch.delenv("CI", raising=False)
    assert scenarios.kept("probe", __file__, make)["seen"] == 1
    assert scenarios.kept("probe", __file__, make)["seen"] == 1 and len(made) == 1, "not replayed within its run"
    assert scenarios.replayed() == [], "a replay within the run that made it is no replay from an earlier run"

    monkeypatch.setenv(VARIABLE, str(tmp_path / "run-2"))  # a later run here: replayed, and said
    assert scenarios.kept("probe", __file__, make)["seen"] == 1 and len(made) == 1
    assert scenarios.replayed() == ["probe"]

    monkeypatch.setenv(VARIABLE, str(tmp_path / "run-3"))  # a later run on CI: run live, then kept for this run
    monkeypatch.setenv("CI", "true")
    assert scenarios.kept("probe", __file__, make)["seen"] == 2
    assert scenarios.kept("probe", __file__, make)["seen"] == 2 and len(made) == 2
    assert scenarios.replayed() == []
