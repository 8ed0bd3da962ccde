"""Study reproductions: ``fatpipe reproduce <study>``.

A study is a folder ``studies/<name>/`` with ``study.toml`` (title, source, modes with their sweep
files and replications, reproduction targets), the sweep files, reference values as CSV files and
a README. :func:`reproduce` runs the sweeps into a results store (reusing finished runs),
evaluates every target (holds / does not hold / not comparable, with the numbers) and writes a
report that puts reference and reproduction side by side.
"""


class StudyError(ValueError):
    """A malformed study folder or an unknown study name."""


from fatpipe.studies.study import Study, list_studies, load_study, studies_dir  # noqa: E402
from fatpipe.studies.targets import Target, Verdict  # noqa: E402
from fatpipe.studies.reproduce import reproduce  # noqa: E402

__all__ = ["Study", "StudyError", "Target", "Verdict", "list_studies", "load_study", "reproduce", "studies_dir"]
