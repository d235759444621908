"""`forget --user-ids-file FILE`: many users erased in one pass, and the rewrite of only what held them.

One built warehouse (a small demo data set, plus three users in every place an
id lives: contract columns, free text, JSON, quarantined lines, the analyzer
archive) is erased in one `forget --user-ids-file` run through the real command
line; a bystander's rows stay. The ids file also holds blank lines, padding, a
repeat and an id that matches nothing. Bad files stop the command before it
erases anything. The partial rewrite is checked on its own on a warehouse file
whose tables fill whole blocks.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import duckdb
import pytest

from operations.erasure_rewrite import BlockMap, block_map, rewrite_warehouse, snapshot
from tests.support.ingest import ingest_ok, query
from tests.support.operations import (
    AS_OF,
    at,
    cli_command,
    days,
    event_on,
    feedback_on,
    files_holding,
    files_under,
    json_escaped,
    ok,
    ops_env,
    places_mentioning,
    raw_line,
    reaction_on,
    read_archive,
    run_ops,
    session_on,
    sha256,
    stored_forms,
    write_sources,
)
from warehouse.connection import connect
from warehouse.location import serving_path

USERS = ["zelda-batch-9c4e1b", "josé-batch-4f7a", "982734650777"]
UNKNOWN = "nobody-batch-0000"  # in the file, in no row
BYSTANDER = "yusuf-keep-3b8d"
PLACEHOLDER = "__the-user-as-written__"
RECENT = AS_OF - days(5)


def batch_sources(folder: Path) -> Path:
    """Each user (and the bystander) in every place and form an id can take."""
    moment = at(RECENT)
    analyzer, sessions, reactions, feedback = [], [], [], []
    for n, user in enumerate([*USERS, BYSTANDER]):
        in_json: Any = int(user) if user.isdigit() else user
        analyzer += [
            event_on(f"ev-old-{n}", at(AS_OF - days(120)), user_message_snippet=f"this is {user}, undo that"),
            event_on(f"ev-new-{n}", moment, user_message_snippet=f"{user} again: wrong file"),
        ]
        sessions += [session_on(f"s-{n}", moment, user=user), session_on(f"s-bad-{n}", moment, user=user, label="meh")]
        reactions += [
            reaction_on(f"r-{n}", moment, user=user),
            raw_line(
                reaction_on(f"r-esc-{n}", moment, user=PLACEHOLDER, confidence=3.0), PLACEHOLDER, json_escaped(user)
            ),
        ]
        feedback += [
            feedback_on(f"f-{n}", moment, created_by=user),
            feedback_on(
                f"f-mention-{n}",
                moment,
                created_by="curator-1",
                comment=f"same as {user}: slow",
                context={"cc": [in_json], "turn": 3},
            ),
        ]
    return write_sources(folder, analyzer=analyzer, sessions=sessions, reactions=reactions, feedback=feedback)


def owned_rows(db: Path, user: str) -> dict[str, int]:
    return {
        table: query(db, f"select count(*) from raw.{table} where {column} = ?", [user])[0][0]
        for table, column in (
            ("session_feedback", "user_id_or_null"),
            ("turn_reactions", "user_id"),
            ("workspace_feedback", "created_by"),
        )
    }


@pytest.fixture(scope="module")
def erased(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A built warehouse with the users, before and after one `forget --user-ids-file` (with its rebuild)."""
    work = tmp_path_factory.mktemp("forget-batch")
    db, env = work / "warehouse.duckdb", ops_env(work)
    demo = cli_command("demo-data", work / "demo", "--scale", "0.02", "--as-of", AS_OF, "-q")
    ok(subprocess.run(demo, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False))
    ingest_ok("--config", work / "demo" / "sources.toml", "--db", db, "-q")
    ingest_ok("--config", batch_sources(work / "users"), "--db", db, "-q")
    ok(run_ops("purge", "--as-of", AS_OF, "--db", db, env=env))
    ok(run_ops("build", "--as-of", AS_OF, "--db", db, env=env, timeout=600))
    archive, served = db.parent / "warehouse-archive", serving_path(db)
    files = [db, served, *files_under(archive)]
    before = {user: files_holding(files, stored_forms(user)) for user in [*USERS, BYSTANDER]}
    archived = {user: any(user in repr(row) for row in read_archive(archive)) for user in USERS}
    bystander = owned_rows(db, BYSTANDER)
    ids_file = work / "ids.txt"
    ids_file.write_text(f"\n  {USERS[0]}  \n{USERS[1]}\n   \n{USERS[2]}\n{USERS[0]}\n{UNKNOWN}\n", encoding="utf-8")
    result = ok(run_ops("forget", "--user-ids-file", ids_file, "--db", db, env=env, timeout=600))
    return {
        "db": db,
        "files": files,
        "before": before,
        "bystander": bystander,
        "result": result,
        "archive": archive,
        "archived": archived,
    }


@pytest.mark.slow
def test_batch_forget_erases_every_id_from_every_file(erased: dict[str, Any]) -> None:
    db, files, before = erased["db"], erased["files"], erased["before"]
    for user in USERS:
        assert any(str(db) in path for path in before[user]), f"the test cannot see {user} in the warehouse"
        assert any(str(serving_path(db)) in path for path in before[user]), f"the test cannot see {user} served"
        # the archive is zstd-compressed: its rows, decoded, hold the id (and its bytes are checked below too)
        assert erased["archived"][user], f"the test cannot see {user} in the archive"
        assert files_holding(files, stored_forms(user)) == {}, f"{user}'s bytes survive"
        assert places_mentioning(db, user) == [], f"a row still mentions {user}"
        assert owned_rows(db, user) == {"session_feedback": 0, "turn_reactions": 0, "workspace_feedback": 0}
    assert not [row for row in read_archive(erased["archive"]) if any(user in repr(row) for user in USERS)]
    # the bystander keeps every row, and its bytes
    assert (
        owned_rows(db, BYSTANDER)
        == erased["bystander"]
        == {
            "session_feedback": 1,
            "turn_reactions": 1,
            "workspace_feedback": 1,
        }
    )
    assert files_holding(files, stored_forms(BYSTANDER)) == before[BYSTANDER]


@pytest.mark.slow
def test_batch_forget_is_one_pass_audited_per_id(erased: dict[str, Any]) -> None:
    db, out = erased["db"], erased["result"].stdout
    logged = query(db, "select user_id_sha256, rows_deleted, is_dry_run from raw.erasure_log order by 1")
    expected = sorted([*USERS, UNKNOWN], key=sha256)
    assert [row[0] for row in logged] == sorted(sha256(user) for user in expected), "one log row per distinct id"
    deleted = {digest: rows for digest, rows, _dry in logged}
    # each user's own rows: a session, a reaction, a feedback; two quarantined lines (the bad session, the
    # escaped reaction)
    assert all(deleted[sha256(user)] == 5 for user in USERS), logged
    assert deleted[sha256(UNKNOWN)] == 0
    assert out.count("rebuilding the marts") == 1, out
    assert len(re.findall(r"^rewrote ", out, flags=re.M)) == 1, out
    assert out.lower().count("verification") == 1, out
    assert "4 user id(s) from" in out and "1 repeated line(s) skipped" in out, out
    assert re.search(r"^raw\.turn_reactions\s+deleted 3$", out, flags=re.M), out
    # the id that matched nothing: named by its line and hash, never in clear
    assert f"line 7 (sha256 {sha256(UNKNOWN)[:12]}): no row matched the id" in out, out
    for user in [*USERS, UNKNOWN]:
        assert user not in out and user not in erased["result"].stderr


def one_session_warehouse(tmp_path: Path) -> Path:
    """A warehouse holding one session feedback row, of user u-1."""
    db = tmp_path / "warehouse.duckdb"
    ingest_ok(
        "--config",
        write_sources(tmp_path / "src", sessions=[session_on("s", at(RECENT), user="u-1")]),
        "--db",
        db,
        "-q",
    )
    return db


def run_forget_file(tmp_path: Path, content: bytes | None) -> subprocess.CompletedProcess[str]:
    db = one_session_warehouse(tmp_path)
    ids_file = tmp_path / "ids.txt"
    if content is not None:
        ids_file.write_bytes(content)
    return run_ops("forget", "--user-ids-file", ids_file, "--no-build", "--db", db, env=ops_env(tmp_path))


SECRET = "sk-live-0123456789abcdef"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        (b"\n  \n", "holds no user id"),
        (b"u-1\n" + SECRET.encode() + b"\x07x\n", "line 2: holds a control character"),
        (b"u-1\n\n" + SECRET.encode() * 100 + b"\n", "line 3: longer than 512 characters"),
        (b"u-1\n\xff" + SECRET.encode() + b"\n", "line 2: not UTF-8"),
    ],
    ids=["missing", "empty", "control", "huge", "not-utf8"],
)
def test_a_bad_ids_file_is_one_line_and_erases_nothing(tmp_path: Path, content: bytes | None, message: str) -> None:
    result = run_forget_file(tmp_path, content)
    assert result.returncode != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr, result.stderr
    assert SECRET not in result.stderr + result.stdout
    assert query(tmp_path / "warehouse.duckdb", "select count(*) from raw.erasure_log")[0][0] == 0
    assert query(tmp_path / "warehouse.duckdb", "select count(*) from raw.session_feedback")[0][0] == 1


@pytest.mark.parametrize("args", [[], ["--user-id", "u-1", "--user-ids-file", "ids.txt"]], ids=["none", "both"])
def test_user_id_and_user_ids_file_are_exclusive(tmp_path: Path, args: list[str]) -> None:
    db = one_session_warehouse(tmp_path)
    result = run_ops("forget", *args, "--db", db, env=ops_env(tmp_path))
    assert result.returncode == 2 and "one of --user-id ID and --user-ids-file FILE" in result.stderr, result.stderr
    assert query(db, "select count(*) from raw.session_feedback")[0][0] == 1


# -- the partial rewrite -----------------------------------------------------------------------------------------
ERASED = "quentin-erased-7e21aa"


def test_rewrite_covers_only_the_tables_that_held_the_id(tmp_path: Path) -> None:
    """Rows holding an id deleted from one big table: afterwards no byte of the id is in the file, every table
    reads back equal, the other big table's blocks are exactly where and what they were, and what was written
    is far below the file's size."""
    db = tmp_path / "warehouse.duckdb"
    con = connect(db)
    con.execute(
        "create table raw.big_with_ids as select range as n, 'user-' || (range % 997) || '-x' as user_id, "
        "'note ' || range as note from range(400000)"
    )
    con.execute(f"insert into raw.big_with_ids values (-1, '{ERASED}', 'hello {ERASED}')")
    con.execute("create table raw.big_without as select range as n, md5(range::varchar) as digest from range(600000)")
    con.close()
    before = snapshot(db)
    assert ERASED.encode() in db.read_bytes(), "the test cannot see the id in the file"
    con = connect(db)
    con.execute(f"delete from raw.big_with_ids where user_id = '{ERASED}'")
    expected = {
        t: con.execute(f"select * from raw.{t} order by all").fetchall() for t in ("big_with_ids", "big_without")
    }
    con.close()
    untouched = {n: s for n, s in before.items() if {seg[1] for seg in s} == {"big_without"}}
    assert untouched, "the untouched table should fill blocks of its own"
    offsets = {n: db.read_bytes()[12288 + n * 262144 : 12288 + (n + 1) * 262144] for n in untouched}
    size = db.stat().st_size

    rewrite = rewrite_warehouse(db, {("raw", "big_with_ids")}, before, [ERASED.encode()])

    assert rewrite.fallback is None and rewrite.tables is not None, rewrite
    assert "raw.big_without" not in rewrite.tables, rewrite.tables
    assert ERASED.encode() not in db.read_bytes(), "the id's bytes survive the rewrite"
    data = db.read_bytes()
    assert {n: data[12288 + n * 262144 : 12288 + (n + 1) * 262144] for n in untouched} == offsets
    with duckdb.connect(str(db), read_only=True) as reread:
        assert {n: s for n, s in block_map(reread).items() if n in untouched} == untouched
        for table, rows in expected.items():
            assert reread.execute(f"select * from raw.{table} order by all").fetchall() == rows, table
    assert rewrite.bytes_zeroed > 0 and rewrite.bytes_zeroed < size / 2, (rewrite.bytes_zeroed, size)


def test_rewrite_falls_back_to_the_whole_file_and_says_why(tmp_path: Path) -> None:
    """A primary key (its index's blocks, which the pragmas do not list): the whole file is copied, with the
    reason."""
    db = tmp_path / "warehouse.duckdb"
    con = connect(db)
    con.execute("create table raw.people (user_id varchar primary key, note varchar)")
    con.execute("insert into raw.people select 'user-' || range, 'n' from range(50000)")
    con.execute(f"insert into raw.people values ('{ERASED}', 'hi')")
    con.close()
    before = snapshot(db)
    con = connect(db)
    con.execute(f"delete from raw.people where user_id = '{ERASED}'")
    con.close()
    rewrite = rewrite_warehouse(db, {("raw", "people")}, before, [ERASED.encode()])
    assert rewrite.tables is None and rewrite.fallback and "blocks are not listed" in rewrite.fallback, rewrite
    assert ERASED.encode() not in db.read_bytes()
    assert query(db, "select count(*) from raw.people")[0][0] == 50000


SHORT = "alice"  # short enough that a segment's statistics keep all of it: the column's smallest value


def _short_id_warehouse(db: Path, *, small_table_first: bool) -> BlockMap:
    """A table whose smallest user_id is SHORT, deleted afterwards; `small_table_first`: another, small table
    whose metadata DuckDB writes just before it (into the same metadata sub-block). The block map before."""
    con = duckdb.connect(str(db))  # DuckDB alone: the metadata's layout depends on every object of the file
    con.execute("create schema raw")
    if small_table_first:
        con.execute("create table raw.a_small as select 'other-' || range as x from range(1000)")
    con.execute(
        f"create table raw.reactions as select case when range % 1000 = 0 then '{SHORT}' "
        "else 'user-' || lpad(range::varchar, 6, '0') end as user_id, range as n from range(300000)"
    )
    con.close()
    before = snapshot(db)
    con = duckdb.connect(str(db))
    con.execute(f"delete from raw.reactions where user_id = '{SHORT}'")
    con.close()
    return before


def test_rewrite_zeroes_the_free_metadata_sub_blocks(tmp_path: Path) -> None:
    """The checkpoint of the rewrite frees the metadata sub-blocks of the old segments, whose statistics hold the
    id as the smallest value (bench scale 100, 'alice'): they are zeroed, the block's checksum written again, and
    the rewrite stays partial."""
    db = tmp_path / "warehouse.duckdb"
    before = _short_id_warehouse(db, small_table_first=False)
    rewrite = rewrite_warehouse(db, {("raw", "reactions")}, before, [SHORT.encode()])
    assert rewrite.fallback is None and rewrite.tables == ["raw.reactions"], rewrite
    assert SHORT.encode() not in db.read_bytes(), "the id's bytes survive the rewrite"
    with duckdb.connect(str(db), read_only=True) as reread:  # DuckDB checks each block's checksum as it reads it
        assert reread.execute("select count(*), min(user_id) from raw.reactions").fetchone() == (299700, "user-000001")


def test_rewrite_writes_the_metadata_a_kept_table_shares_afresh(tmp_path: Path) -> None:
    """A table left as it was whose row groups' metadata shares a sub-block with the old statistics of the
    rewritten one (written just before them by an earlier checkpoint): DuckDB reuses that metadata, and the
    sub-block, in use, keeps the id behind it, unless the rewrite writes all metadata afresh. The kept table's data
    blocks stay as they were."""
    db = tmp_path / "warehouse.duckdb"
    before = _short_id_warehouse(db, small_table_first=True)
    kept = {n: s for n, s in before.items() if {seg[1] for seg in s} == {"a_small"}}
    rewrite = rewrite_warehouse(db, {("raw", "reactions")}, before, [SHORT.encode()])
    assert rewrite.fallback is None and rewrite.tables == ["raw.reactions"], rewrite
    assert SHORT.encode() not in db.read_bytes(), "the id's bytes survive the rewrite"
    with duckdb.connect(str(db), read_only=True) as reread:
        assert kept and {n: s for n, s in block_map(reread).items() if n in kept} == kept
        assert reread.execute("select count(*) from raw.a_small").fetchone() == (1000,)


def test_rewrite_fallback_names_where_the_bytes_were(tmp_path: Path) -> None:
    """An id's bytes in a row the erasure keeps (another user's text, here not a changed table): the partial
    rewrite cannot remove them, the whole file is copied and the reason names the place: block and table."""
    db = tmp_path / "warehouse.duckdb"
    before = _short_id_warehouse(db, small_table_first=False)
    con = duckdb.connect(str(db))
    con.execute(f"create table raw.notes as select 'too verbose, redo it short{SHORT}' as note")
    con.close()
    rewrite = rewrite_warehouse(db, {("raw", "reactions")}, before, [SHORT.encode()])
    assert rewrite.tables is None and rewrite.fallback, rewrite
    assert re.search(r"\(byte [\d,]+, block \d+: a segment of raw\.notes column \[0\]\)$", rewrite.fallback), rewrite
    assert query(db, "select count(*) from raw.notes")[0][0] == 1
