"""Moodle's grading worksheet in the languages Moodle ships most (English, German, French, Spanish).

The worksheet ("Download grading worksheet") names its columns with Moodle's language strings, in the teacher's
language: ``recordid`` (Identifier), ``gradenoun``/``grade`` (Grade), ``maxgrade`` (Maximum grade), ``fullname``,
``email`` and ``lastmodifiedsubmission`` (Last modified (submission)), as Moodle's language packs write them. Its
dates follow the language's ``strftimedaydatetime`` ("Sunday, 1 March 2026, 10:10 PM"; German "Sonntag,
1. März 2026, 22:10"; French "dimanche 1 mars 2026, 22:10"; Spanish "domingo, 1 de marzo de 2026, 22:10").
"""
from __future__ import annotations

import re
from datetime import datetime

# Each column the grader reads, by its English name, with its names in the other languages (lower case).
COLUMNS = {
    "identifier": ("identifier", "id", "identifiant", "identificador"),
    "grade": ("grade", "bewertung", "note", "calificación"),
    "maximum grade": ("maximum grade", "bestwertung", "note maximale", "calificación máxima"),
    "full name": ("full name", "vollständiger name", "nom complet", "nombre completo"),
    "email address": ("email address", "e-mail-adresse", "adresse de courriel", "dirección email",
                      "dirección de correo"),
    "last modified (submission)": ("last modified (submission)", "zuletzt geändert (abgabe)",
                                   "dernière modification (travail remis)", "última modificación (entrega)"),
}
_MONTHS = {
    **dict.fromkeys(("januar", "janvier", "enero"), "january"), **dict.fromkeys(("februar", "février", "febrero"),
                                                                                "february"),
    **dict.fromkeys(("märz", "mars", "marzo"), "march"), **dict.fromkeys(("avril", "abril"), "april"),
    **dict.fromkeys(("mai", "mayo"), "may"), **dict.fromkeys(("juni", "juin", "junio"), "june"),
    **dict.fromkeys(("juli", "juillet", "julio"), "july"), **dict.fromkeys(("août", "agosto"), "august"),
    **dict.fromkeys(("septembre", "septiembre"), "september"), **dict.fromkeys(("oktober", "octobre", "octubre"),
                                                                               "october"),
    **dict.fromkeys(("novembre", "noviembre"), "november"), **dict.fromkeys(("dezember", "décembre", "diciembre"),
                                                                            "december"),
}
_WEEKDAYS = {"montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag", "lundi", "mardi",
             "mercredi", "jeudi", "vendredi", "samedi", "dimanche", "lunes", "martes", "miércoles", "jueves",
             "viernes", "sábado", "domingo"}


def columns(header: list[str]) -> dict[str, int]:
    """The worksheet's columns the grader reads, by English name -> index in `header` (those present)."""
    lower = [h.strip().lower() for h in header]
    found = {}
    for name, names in COLUMNS.items():
        at = next((lower.index(n) for n in names if n in lower), None)
        if at is not None:
            found[name] = at
    return found


def is_worksheet(header: list[str]) -> bool:
    """Whether `header` is a Moodle grading worksheet's, in any of the languages above."""
    return {"identifier", "grade"} <= set(columns(header))


def date(text: str) -> datetime | None:
    """A worksheet date (naive: the downloading teacher's zone), in any of the languages above; None for "-"."""
    import dateutil.parser

    words = re.findall(r"[^\W\d_]+|\d+|[:]", re.sub(r"(\d)h(\d)", r"\1:\2", text.strip().lower()))
    if not words or text.strip() == "-":
        return None
    kept = [_MONTHS.get(w, w) for w in words if w not in _WEEKDAYS and w not in ("de", "à", "um", "uhr")]
    try:
        return dateutil.parser.parse(" ".join(kept).replace(" : ", ":"))
    except (ValueError, OverflowError):
        return None
