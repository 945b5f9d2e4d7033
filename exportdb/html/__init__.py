"""The page shell and the one stylesheet behind every HTML page (the export reports, the ExportDB docs),
and the ExportDB docs' own templates.

Pages are rendered by jinja2 with autoescaping on, so every value a template prints is escaped
(a test id or a torch message holding ``<script>`` or quotes is shown as text, never run).
jinja2 (a torch dependency) is imported on the first render only: importing this package, or
pytest_export, costs nothing. Lives in exportdb because pytest_export may import exportdb, not
the other way round. Templates are in ``templates/`` (``base.html.j2``: every page's shell), the
stylesheet is ``style.css``. Another package's pages (the reports: pytest_export.rendering) keep their
templates in their own ``templates/`` folder and name that package in ``template_package``.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any, Callable

__all__ = ["render"]


def render(template: str, /, *, shown: Callable[[Any], str] = str, template_package: str | None = None,
           **context: Any) -> str:
    """Return ``templates/<template>`` rendered with ``context``; printed values pass ``shown``, then get escaped.

    ``template_package``: a package whose ``templates/`` folder is searched first (its pages extend
    this package's ``base.html.j2`` and get its stylesheet).
    """
    return _environment(shown, template_package).get_template(template).render(**context)


@functools.lru_cache(maxsize=None)
def _environment(shown: Callable[[Any], str], template_package: str | None = None) -> Any:
    import jinja2
    from markupsafe import Markup

    def finalize(value: Any) -> Any:
        # Markup is HTML a template (a macro, the stylesheet) made; everything else is text to show.
        return value if isinstance(value, Markup) else shown(value)

    loaders = [jinja2.PackageLoader(template_package, "templates")] if template_package else []
    loaders.append(jinja2.PackageLoader("exportdb.html", "templates"))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=True,
        undefined=jinja2.StrictUndefined,  # a misspelt field fails loudly instead of printing nothing
        finalize=finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.globals["stylesheet"] = Markup(resources.files(__name__).joinpath("style.css").read_text(encoding="utf-8"))
    return env
