import gzip
import json
from pathlib import Path

import pytest

from orchestrator.diverge.reader import Transcript, read_transcript
from orchestrator.failures import DataError, TranscriptError
from orchestrator.specs.transcript import REDACTED, CallRecord, TranscriptLimits, encode_record
from tests.diverge.standin import run_transcript


def _write(path: Path, lines: list[bytes]) -> Path:
    with gzip.open(path, "wb") as f:
        f.writelines(lines)
    return path


def _record(**changes: object) -> dict:
    record = json.loads(encode_record(run_transcript("mini-swe-agent", 1)[0]))
    record.update(changes)
    return record


def _line(record: dict) -> bytes:
    return json.dumps(record).encode() + b"\n"


def test_round_trip_in_any_line_order(tmp_path: Path) -> None:
    calls = run_transcript("codex", 3)
    lines = [encode_record(c) for c in calls]
    path = _write(
        tmp_path / "run.jsonl.gz", [lines[1], lines[0], *lines[2:]]
    )  # overlapping calls finish out of order
    transcript = read_transcript(path)
    assert isinstance(transcript, Transcript) and not transcript.truncated
    assert [c.index for c in transcript.calls] == list(range(len(calls)))
    assert transcript.calls == tuple(calls)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"v": 2}, "v: Input should be 1"),
        ({"api": "gemini"}, "api: Input should be"),
        ({"outcome": "fine"}, "outcome: Input should be"),
        ({"index": -1}, "index: Input should be greater than or equal to 0"),
        ({"index": True}, "index: Input should be a valid integer"),
        ({"started_at": "yesterday"}, "started_at: Input should be a valid number"),
        ({"path": "v1/chat"}, "path: String should match"),
        ({"extra": 1}, "extra: Extra inputs are not permitted"),
        ({"speaker": "x" * 300}, "speaker: String should have at most 256 characters"),
    ],
)
def test_records_are_validated_strictly(tmp_path: Path, change: dict, message: str) -> None:
    path = _write(tmp_path / "run.jsonl.gz", [_line(_record(**change))])
    with pytest.raises(TranscriptError, match=f"line 1: {message}"):
        read_transcript(path)


def test_credentials_must_be_redacted(tmp_path: Path) -> None:
    record = _record()
    record["request"]["headers"]["authorization"] = "Bearer sk-live-123"
    with pytest.raises(TranscriptError, match="request.headers: .*holds a credential"):
        read_transcript(_write(tmp_path / "a.jsonl.gz", [_line(record)]))
    record["request"]["headers"]["authorization"] = REDACTED
    record["request"]["headers"]["X-Api-Key"] = REDACTED
    with pytest.raises(TranscriptError, match="lower-case"):
        read_transcript(_write(tmp_path / "b.jsonl.gz", [_line(record)]))


def test_body_shapes_are_checked(tmp_path: Path) -> None:
    record = _record()
    record["request"]["body_b64"] = "aGk="
    with pytest.raises(TranscriptError, match="body or body_b64, not both"):
        read_transcript(_write(tmp_path / "a.jsonl.gz", [_line(record)]))
    record["request"]["body"] = None
    record["request"]["body_b64"] = "not base64!"
    with pytest.raises(TranscriptError, match="not valid base64"):
        read_transcript(_write(tmp_path / "b.jsonl.gz", [_line(record)]))
    record = _record()
    record["response"]["events"] = [["x", "{}"]]
    with pytest.raises(TranscriptError, match="a body or events, not both"):
        read_transcript(_write(tmp_path / "c.jsonl.gz", [_line(record)]))
    record["response"]["body"] = None
    record["response"]["events"] = [["x", 1]]
    with pytest.raises(TranscriptError, match=r"response.events.0.1: Input should be a valid string"):
        read_transcript(_write(tmp_path / "d.jsonl.gz", [_line(record)]))
    binary = _record()
    binary["request"]["body"] = None
    binary["request"]["body_b64"] = "/w=="
    parsed = CallRecord.model_validate_json(_line(binary))
    assert parsed.request.body_bytes() == b"\xff"


def test_indices_must_run_without_gaps_or_repeats(tmp_path: Path) -> None:
    lines = [encode_record(c) for c in run_transcript("pi", 4)]
    with pytest.raises(TranscriptError, match="call index 1 is missing"):
        read_transcript(_write(tmp_path / "a.jsonl.gz", [lines[0], *lines[2:]]))
    with pytest.raises(TranscriptError, match="call index 2 appears twice"):
        read_transcript(_write(tmp_path / "b.jsonl.gz", [*lines, lines[2]]))


def test_sizes_are_bounded(tmp_path: Path) -> None:
    lines = [encode_record(c) for c in run_transcript("claude-code", 5)]
    path = _write(tmp_path / "run.jsonl.gz", lines)
    longest = max(len(line) for line in lines)
    with pytest.raises(TranscriptError, match=f"line \\d is longer than {longest - 1} bytes"):
        read_transcript(path, limits=TranscriptLimits(max_record_bytes=longest - 1))
    with pytest.raises(TranscriptError, match="more than 3 calls"):
        read_transcript(path, limits=TranscriptLimits(max_calls=3))
    with pytest.raises(TranscriptError, match="more than 1000 bytes uncompressed"):
        read_transcript(path, limits=TranscriptLimits(max_total_bytes=1000))
    record = _record()
    record["request"]["headers"] = {f"x-h{i}": "v" for i in range(300)}
    with pytest.raises(TranscriptError, match="300 headers, more than 256"):
        read_transcript(_write(tmp_path / "h.jsonl.gz", [_line(record)]))


def test_a_file_cut_short_is_refused_or_read_up_to_the_cut(tmp_path: Path) -> None:
    lines = [encode_record(c) for c in run_transcript("opencode", 6)]
    whole = gzip.compress(b"".join(lines))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    with pytest.raises(TranscriptError, match="ends early"):
        read_transcript(cut)
    partial = read_transcript(cut, partial=True)
    assert partial.truncated and 0 < len(partial) < len(lines)
    assert [c.index for c in partial.calls] == list(range(len(partial)))
    unterminated = _write(tmp_path / "u.jsonl.gz", [*lines[:2], lines[2][:-40]])
    with pytest.raises(TranscriptError, match="line 3 does not end with a newline"):
        read_transcript(unterminated)
    assert len(read_transcript(unterminated, partial=True)) == 2


def test_unreadable_files_say_so(tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl.gz"
    plain.write_bytes(_line(_record()))
    with pytest.raises(TranscriptError, match="not a readable gzip file"):
        read_transcript(plain)
    with pytest.raises(TranscriptError, match="cannot read"):
        read_transcript(tmp_path / "absent.jsonl.gz")
    blank = _write(tmp_path / "blank.jsonl.gz", [b"\n"])
    with pytest.raises(TranscriptError, match="line 1 is blank"):
        read_transcript(blank)
    assert issubclass(TranscriptError, DataError)


def test_the_gateway_way_of_writing_reads_back(tmp_path: Path) -> None:
    # the gateway appends (a new gzip member per writer), sync-flushes every line, and may be killed
    # before closing: every complete line must still be readable
    import zlib

    lines = [encode_record(c) for c in run_transcript("claude-code", 7)]
    capped = json.loads(lines[2])
    capped["request"]["truncated"] = 5_000_000  # bodies over the gateway's cap are kept as a prefix
    capped["response"]["events_dropped"] = 3
    lines[2] = _line(capped)
    path = tmp_path / "run.jsonl.gz"
    with gzip.open(path, "ab") as f:
        f.write(lines[0])
    with gzip.open(path, "ab") as f:
        for line in lines[1:]:
            f.write(line)
            f.flush(zlib.Z_SYNC_FLUSH)
        f.fileobj.flush()  # the process is killed here: no gzip trailer yet
        with pytest.raises(TranscriptError, match="ends early"):
            read_transcript(path)
        transcript = read_transcript(path, partial=True)
        assert len(transcript) == len(lines) and transcript.truncated
        assert transcript.calls[2].request.truncated == 5_000_000
        assert transcript.calls[2].response.events_dropped == 3
    assert not read_transcript(path).truncated
