"""MetadataStore adapters under contract: the SQLAlchemy store on SQLite (always) and on a real
PostgreSQL: ``LOCUS_TEST_PG_URL`` when set, otherwise a throwaway server started here from the
PostgreSQL binaries on this machine (Debian's /usr/lib/postgresql/*/bin, ``LOCUS_TEST_PG_BIN``
or pg_ctl on PATH), run as the ``postgres`` user when the tests run as root. Each test gets a
database of its own. Without either, the PostgreSQL cases skip and say why."""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from locus.database import Database
from locus.gateway.adapters.sql_metadata_store import SqlMetadataStore


@dataclass(frozen=True)
class PostgresServer:
    admin_url: str  # a PostgreSQL URL; its user may be allowed to CREATE DATABASE

    def url(self, *, database: str | None = None, driver: str = "postgresql") -> str:
        url = make_url(self.admin_url).set(drivername=driver)
        if database is not None:
            url = url.set(database=database)
        return url.render_as_string(hide_password=False)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _postgres_bin_dir() -> Path | None:
    configured = os.environ.get("LOCUS_TEST_PG_BIN")
    if configured:
        return Path(configured)

    def version(path: Path) -> float:
        try:
            return float(path.parent.name)
        except ValueError:
            return 0.0

    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version, reverse=True)
    for candidate in debian:
        if (candidate / "initdb").exists() and (candidate / "pg_ctl").exists():
            return candidate
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


def _as_unprivileged() -> tuple[list[str], int | None, int | None]:
    """PostgreSQL refuses to run as root: run its binaries as the postgres user then."""
    if os.geteuid() != 0:
        return [], None, None
    runuser = shutil.which("runuser")
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        account = None
    if runuser is None or account is None:
        raise RuntimeError("running as root without runuser or a 'postgres' user")
    return [runuser, "-u", "postgres", "--"], account.pw_uid, account.pw_gid


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    configured = os.environ.get("LOCUS_TEST_PG_URL")
    if configured:
        yield PostgresServer(admin_url=configured)
        return
    bin_dir = _postgres_bin_dir()
    if bin_dir is None:
        pytest.skip(
            "no PostgreSQL: set LOCUS_TEST_PG_URL, or install PostgreSQL "
            "(Debian: postgresql-15) so initdb/pg_ctl are found"
        )
    try:
        prefix, uid, gid = _as_unprivileged()
    except RuntimeError as error:
        pytest.skip(f"cannot start PostgreSQL: {error}")
    base = Path(tempfile.mkdtemp(prefix="locus-pg-"))
    if uid is not None and gid is not None:
        os.chown(base, uid, gid)
    data = base / "data"
    port = _free_port()

    def run(*command: str) -> None:
        result = subprocess.run(
            [*prefix, *command], capture_output=True, text=True, timeout=120, check=False
        )
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {result.stderr or result.stdout}")

    try:
        run(str(bin_dir / "initdb"), "-D", str(data), "-U", "locus", "--auth=trust", "-E", "UTF8")
        run(
            str(bin_dir / "pg_ctl"),
            "-D", str(data),
            "-l", str(base / "postgres.log"),
            "-o", f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off",
            "-w", "-t", "60",
            "start",
        )  # fmt: skip
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"could not start PostgreSQL from {bin_dir}: {error}")
    try:
        yield PostgresServer(admin_url=f"postgresql://locus@127.0.0.1:{port}/postgres")
    finally:
        subprocess.run(
            [*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(base, ignore_errors=True)


async def _fresh_postgres_url(server: PostgresServer) -> AsyncIterator[str]:
    import asyncpg  # installed with locus-database

    admin = await asyncpg.connect(server.url())
    name = f"locus_gateway_{uuid.uuid4().hex[:12]}"
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    except asyncpg.PostgresError:
        # No CREATEDB right (a provided server): use its database, tables dropped around us.
        await admin.close()
        yield server.url(driver="postgresql+asyncpg")
        return
    await admin.close()
    try:
        yield server.url(database=name, driver="postgresql+asyncpg")
    finally:
        admin = await asyncpg.connect(server.url())
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SqlMetadataStore]:
    """A fresh, initialized store of each backend."""
    if request.param == "sqlite":
        urls: AsyncIterator[str] | None = None
        url = f"sqlite+aiosqlite:///{tmp_path / 'gateway.db'}"
    else:
        server = request.getfixturevalue("postgres_server")
        urls = _fresh_postgres_url(server)
        url = await anext(urls)
    database = Database(url)
    if not database.is_sqlite:
        await _drop_gateway_tables(database)
    metadata_store = SqlMetadataStore(database)
    await metadata_store.initialize()
    try:
        yield metadata_store
    finally:
        if not database.is_sqlite:
            await _drop_gateway_tables(database)
        await metadata_store.close()
        if urls is not None:
            await urls.aclose()


async def _drop_gateway_tables(database: Database) -> None:
    from locus.gateway.adapters.tables import Base

    async with database.engine.begin() as connection:
        await connection.run_sync(Base.metadata.drop_all)
