"""Domain exceptions raised by the ast extractor."""


class AstDomainError(Exception):
    """Base class for every error the ast domain raises on purpose."""


class UnsupportedLanguage(AstDomainError):
    """The extractor has no `LanguageSpec` for the requested language."""

    def __init__(self, language: str, supported: tuple[str, ...]) -> None:
        super().__init__(f"unsupported language {language!r}; supported: {', '.join(supported)}")
        self.language = language
        self.supported = supported


class UndecodableSource(AstDomainError):
    """The source bytes are not valid UTF-8, so lines and offsets cannot be trusted."""

    def __init__(self, relative_path: str, reason: str) -> None:
        super().__init__(f"{relative_path} is not valid UTF-8: {reason}")
        self.relative_path = relative_path
