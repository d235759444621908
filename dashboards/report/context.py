"""What every section of the report knows: the filters, the build's as-of, and who reads it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from dashboards import words
from dashboards.filters import Filters
from dashboards.report.markup import Builder, escape
from warehouse.access import Scope

# The sections' anchors: the summary links to them.
ALERTS = "alerts"
HEADLINES = "headline-rates"
TRENDS = "weekly-trends"
MODALITY = "session-feedback-by-modality"
DIMENSION_CHANGES = "skill-dimension-changes"
SKILL_TRENDS = "skill-trends"
HOTSPOTS = "dimension-hotspots"
EVALS = "eval-matrix"
BASELINE = "eval-baseline"
REGRESSIONS = "eval-regressions"
SOURCES = "sources"
RETENTION = "retention-status"


@dataclass(frozen=True)
class Context:
    f: Filters
    built_as_of: dt.date
    reader: Scope  # whose access the report has (warehouse/scoped.py): the command line's is every tenant

    @property
    def built(self) -> str:
        return f"as of the last build, {self.built_as_of} (UTC)"

    def left_out(self) -> str | None:
        """What a section of a source without a tenant reads in place of its numbers, or None when it shows
        them: "not available" when the reader's access lacks every tenant, "not split by tenant" when the report
        is narrowed to one tenant (--tenant): its numbers would be the all-tenant ones."""
        if not self.reader.is_all:
            return "not available"
        return words.not_split(self.f.tenant, self.f.project)

    def closed(self, report: Builder, heading: str, anchor: str) -> bool:
        """True, after a heading that says so, when a section of a source without a tenant shows no number."""
        reading = self.left_out()
        if reading is None:
            return False
        if reading == "not available":
            tenants = ", ".join(sorted(self.reader.tenants or ())) or "none"
            why = f"Not available: this source has no tenant, and your access covers only {tenants}."
        else:
            why = (
                f"{reading.capitalize()}: this source has no tenant, so its numbers cover every tenant, not only "
                f"{self.f.tenant_name or self.f.tenant}. Run the report without --tenant to see them."
            )
        report.heading(heading, anchor=anchor)
        report.raw(f"<p class='note'>{escape(why)}</p>")
        return True
