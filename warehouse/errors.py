"""Errors a user can cause and fix: shown as one line, never as a traceback."""


class UserError(Exception):
    """A mistake in the command, the config or the environment, with what to do about it.

    The CLI prints `error: <message>` and exits with `exit_code`.
    """

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class WarehouseLocked(UserError):
    """Another process held the warehouse file longer than we were willing to wait."""
