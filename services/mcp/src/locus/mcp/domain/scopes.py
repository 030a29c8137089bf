"""The scope a tool may ask instead of one project: named projects, a subsystem or a system,
resolved by the gateway to the projects the caller may read."""

from __future__ import annotations

from pydantic import BaseModel, Field


class QuestionScope(BaseModel):
    projects: list[str] = Field(default=[], description="project names or ids")
    subsystem: str = Field(default="", description="a subsystem's id; or its name, with system")
    system: str = Field(default="", description="a system's id or name")
