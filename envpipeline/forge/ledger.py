"""The transfer ledger: measured (seed p, rewrite p) pairs that calibrate the next round's prior.

`forge_run` appends one JSONL row (a `TransferObservation`) per accepted bundle whose pass rate
it measured; the next run reads the ledger and fits the transfer (`calibrated_config`). The
Dagster graph keeps the same pairs as columns of ``verified_bundles`` (`observations_from_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from envpipeline.errors import ConfigError
from envpipeline.select.actions import SelectorConfig, prior_deltas
from envpipeline.select.calibration import TransferObservation, calibrate
from envpipeline.textfiles import read_text_file

#: The ledger's file name under the forge output folder.
LEDGER_NAME = "transfer_ledger.jsonl"


def read_ledger(path: Path) -> list[TransferObservation]:
    """Every observation of the ledger ([] when there is none yet; ConfigError on a bad row)."""
    if not path.is_file():
        return []
    out = []
    for number, line in enumerate(read_text_file(path, "the transfer ledger").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(TransferObservation.model_validate_json(line))
        except ValidationError as e:
            raise ConfigError(
                f"{path}:{number}: not a transfer observation ({e.error_count()} errors: "
                f"{e.errors()[0]['msg']}); fix or remove the line"
            ) from e
    return out


def append_ledger(path: Path, observations: Iterable[TransferObservation]) -> int:
    """Append observations as JSONL rows; returns how many were written."""
    rows = [o.model_dump_json() + "\n" for o in observations]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(rows)
    return len(rows)


def observations_from_rows(rows: Iterable[dict[str, Any]]) -> list[TransferObservation]:
    """The measured pairs of ``verified_bundles`` lake rows (accepted rows with both pass rates)."""
    out = []
    for r in rows:
        measured, seed = r.get("measured_pass_rate"), r.get("seed_pass_rate")
        if not r.get("accepted") or measured is None or seed is None or "/" not in r["action_variant"]:
            continue
        projection, direction = r["action_variant"].split("/", 1)
        out.append(
            TransferObservation.model_validate(
                {
                    "seed_id": r["seed_id"],
                    "task_name": Path(r["bundle_path"]).name,
                    "projection": projection,
                    "direction": direction,
                    "family": r.get("family"),
                    "seed_pass_rate": seed,
                    "measured_pass_rate": measured,
                    "projected_pass_rate": r.get("projected_pass_rate"),
                    "rollouts": r.get("rollouts") or 0,
                    "policy": r.get("policy") or "",
                }
            )
        )
    return out


def calibrated_config(
    observations: list[TransferObservation], config: SelectorConfig | None = None
) -> SelectorConfig:
    """`config` with the transfer calibrated on `observations` (unchanged when there are none)."""
    config = config or SelectorConfig()
    if not observations:
        return config
    fitted = calibrate(observations, prior_deltas(config))
    return config.model_copy(update={"calibration": fitted})


def calibration_summary(config: SelectorConfig) -> dict[str, Any]:
    """variant[@family] -> {a, b, observations, source} of the config's calibration ({} if none)."""
    if config.calibration is None:
        return {}
    return {
        key: {"a": round(f.a, 4), "b": round(f.b, 4), "observations": f.observations, "source": f.source}
        for key, f in sorted(config.calibration.fits.items())
    }
