"""A judge: a model that grades a run from the task's instruction and the delivered diff (issue 26).

    judge:
      name: sonnet-judge
      endpoint: anthropic          # a name in endpoints.yaml; its key stays on the host
      model: claude-sonnet-4-5
      prompt: |                    # {instruction} and {diff} only: never the hidden tests, never the holdout
        Does this patch resolve the issue? ... {instruction} ... {diff} ... End with VERDICT: PASS or VERDICT: FAIL.
      verdict: {pattern: "^VERDICT: (PASS|FAIL)$", pass: PASS, fail: FAIL}
      max_diff_bytes: 65536
      max_tokens: 1024
      limit_usd: 0.50              # per verdict, enforced by the gateway

The verdict is read from the last non-empty line of the model's answer only, never from the prompt.
"""

from __future__ import annotations

import hashlib
import json
import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

PLACEHOLDERS = ("{instruction}", "{diff}")
_FORBIDDEN = re.compile(r"\{(tests?|hidden[^}]*|holdout[^}]*|solution|patch_ref|reference[^}]*)\}", re.I)


class VerdictRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    pattern: str = r"^VERDICT: (PASS|FAIL)$"
    pass_: str = Field("PASS", alias="pass")
    fail: str = "FAIL"

    @field_validator("pattern")
    @classmethod
    def _one_group(cls, v: str) -> str:
        if re.compile(v).groups != 1:
            raise ValueError("the verdict pattern needs exactly one group (the verdict word)")
        return v


class JudgeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9._-]+$")
    endpoint: str
    model: str
    prompt: str
    verdict: VerdictRule = VerdictRule()
    max_diff_bytes: int = Field(65536, ge=256, le=4 * 1024 * 1024)
    max_tokens: int = Field(1024, ge=16, le=32768)
    limit_usd: float = Field(0.5, gt=0)

    def digest(self) -> str:
        """The judge's identity for calibration: endpoint, model, prompt and parse rule (a changed prompt is
        another judge, whose agreement with the tests must be measured again)."""
        text = json.dumps(self.model_dump(mode="json", by_alias=True), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    @field_validator("prompt")
    @classmethod
    def _placeholders(cls, v: str) -> str:
        for p in PLACEHOLDERS:
            if v.count(p) != 1:
                raise ValueError(f"the prompt needs {p} exactly once")
        bad = _FORBIDDEN.search(v)
        if bad:
            raise ValueError(f"the prompt may hold only {{instruction}} and {{diff}}, not {bad.group(0)}: a judge "
                             "never sees the hidden tests or the holdout")
        return v
