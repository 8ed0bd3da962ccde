"""Study reproductions: ``fatpipe reproduce <study>`` (framework in progress)."""


class StudyError(ValueError):
    """A malformed study folder or an unknown study name."""


__all__ = ["StudyError"]
