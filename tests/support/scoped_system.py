"""A system of three scanned projects for questions wider than one project: subsystem "sales"
(orders, invoices) and subsystem "astronomy" (telescope), each project one small file about its
own topic, so that where a result comes from is plain from its path (the telescope's has a
caller, for impact)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from locus.v1 import ingestion_pb2

TREES = {
    "orders": {
        "src/orders/checkout.py": '''"""Checkout of a shopping basket."""


def place_order(basket, customer):
    """Reserve the basket's items and create the order for the customer."""
    reserved = [item for item in basket if item.in_stock]
    return {"customer": customer, "items": reserved}
''',
    },
    "invoices": {
        "src/invoices/tax.py": '''"""Value added tax on invoices."""


def compute_invoice_tax(invoice_total, vat_rate):
    """The VAT owed on an invoice total at the given rate."""
    return round(invoice_total * vat_rate, 2)
''',
    },
    "telescope": {
        "src/telescope/parallax.py": '''"""Distances to stars from their parallax."""


def parallax_distance_parsecs(parallax_arcseconds):
    """A star's distance in parsecs from its annual parallax angle."""
    return 1.0 / parallax_arcseconds
''',
        "src/telescope/report.py": """from telescope.parallax import parallax_distance_parsecs


def print_report(rows):
    for row in rows:
        print(row.name, parallax_distance_parsecs(row.angle))
""",
    },
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative_path, text in files.items():
        path = root / relative_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


async def make_system(gateway: Any, work_dir: Path) -> dict[str, Any]:
    """The system, created through ``gateway`` (the gateway tests' Gateway) with its projects'
    trees under ``work_dir``, every project scanned: {"system": its name, "projects": {key:
    ingestion Project}}."""
    stub = gateway.stub
    made = await stub.CreateSystem(
        ingestion_pb2.CreateSystemRequest(name=f"company-{uuid.uuid4().hex[:8]}")
    )
    for subsystem in ("sales", "astronomy"):
        await stub.CreateSubsystem(
            ingestion_pb2.CreateSubsystemRequest(system_id=made.name, name=subsystem)
        )
    suffix = uuid.uuid4().hex[:8]
    projects: dict[str, Any] = {}
    for key, files in TREES.items():
        root = write_tree((work_dir / f"{key}-{suffix}").resolve(), files)
        project = await gateway.create_project(root)
        await stub.UpdateProject(
            ingestion_pb2.UpdateProjectRequest(
                project_id=project.name,
                subsystem_id="astronomy" if key == "telescope" else "sales",
                system=made.name,
            )
        )
        projects[key] = project
    jobs = await asyncio.gather(*(gateway.scan_and_wait(p.name) for p in projects.values()))
    assert all(job.state == ingestion_pb2.SCAN_STATE_COMPLETED for job in jobs), jobs
    return {"system": made.name, "projects": projects}
