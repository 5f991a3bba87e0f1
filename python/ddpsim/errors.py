"""The exceptions and warnings of the ddpsim package.

Every error ddpsim reports is a :class:`ddpsim.Error`; bad input is a :class:`ScenarioError`
(also a ``ValueError``) that says where and what, a request this build cannot do an
:class:`UnsupportedError`::

    try:
        ddpsim.predict({"training": {"per_gpu_batch": 0}, ...})
    except ddpsim.ScenarioError as e:
        print(e.file, e.pointer, e.expected, e.got)
    except ddpsim.Error as e:          # anything else ddpsim refused
        print(e)

Wrong Python types (a set where JSON is expected, an int where a path is) stay ``TypeError``.
"""

__all__ = ["Error", "ScenarioError", "UnsupportedError", "ScenarioWarning"]


class Error(RuntimeError):
    """Any error ddpsim reports; the message is one line, as the CLI prints it."""


class ScenarioError(Error, ValueError):
    """Bad input: a scenario, a preset, an imported file or an argument.

    Attributes (strings, empty when not applicable):
      file:     the file (or ``<base_dir>/<dict>`` for a dict, ``.../<collective>`` for the
                arguments of :func:`ddpsim.collective`)
      pointer:  the JSON pointer of the bad value (``/training/per_gpu_batch``)
      expected: what was expected there
      got:      what was found
    """

    def __init__(self, message, file="", pointer="", expected="", got=""):
        super().__init__(message)
        self.file = file
        self.pointer = pointer
        self.expected = expected
        self.got = got


class UnsupportedError(Error):
    """A valid request that this build or this version of ddpsim cannot do."""


class ScenarioWarning(UserWarning):
    """What an import could not carry over or had to assume (the CLI's ``warning:`` lines)."""
