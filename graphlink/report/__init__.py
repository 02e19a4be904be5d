"""The release report (docs/report.md): the numbers a privacy officer forwards, as typed data.

:mod:`graphlink.report.release` computes :class:`ReleaseReport` (:func:`build_report`);
:mod:`graphlink.report.exposure` the leave-one-location-out exposure.  The HTML is rendered at the edge
(:mod:`graphlink.io.report_html`).
"""

from graphlink.report.exposure import LocationExposure, location_exposure
from graphlink.report.release import ReleaseReport, build_report

__all__ = ["LocationExposure", "ReleaseReport", "build_report", "location_exposure"]
