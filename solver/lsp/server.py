"""The language server over stdio (pygls): the protocol's requests and notifications, answered
by `analysis` and `lexical`.

Checking a document takes from a fraction of a second to minutes (a 1 MB file), so it runs on
one background thread: a document is checked when it opens and again once its text has not
changed for a moment, the newest text only, and its diagnostics are published when that text
is still the document's.  Requests never wait for it: they read the latest analysis (of a
slightly older text while one is under way), and what needs no analysis (the outline, the
meaning of a keyword) is read from the text as it is."""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import Path

from lsprotocol import types as T
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCRequestMessage, LanguageServerProtocol, default_converter

from ..lang.sources import display
from . import analysis as A
from . import lexical
from .reference import Examples

log = logging.getLogger(__name__)

# Seconds without a change before a document is checked again.
DEBOUNCE = 0.3
# A file of this many characters waits a second after opening before it is checked.
LARGE = 500_000
# The method a request whose parameters do not fit its method is answered by (with an error).
INVALID = "rulebook/invalidRequest"

_SYMBOL_KINDS = {
    "param": T.SymbolKind.Constant, "const": T.SymbolKind.Constant, "type": T.SymbolKind.Class,
    "enum": T.SymbolKind.Enum, "record": T.SymbolKind.Struct, "reading": T.SymbolKind.Enum,
    "def": T.SymbolKind.Function, "proc": T.SymbolKind.Function,
    "action": T.SymbolKind.Method, "chance": T.SymbolKind.Method,
    "extend": T.SymbolKind.Method, "state": T.SymbolKind.Namespace,
    "init": T.SymbolKind.Constructor, "invariant": T.SymbolKind.Boolean,
    "transition": T.SymbolKind.Boolean, "example": T.SymbolKind.Event,
    "puzzle": T.SymbolKind.Event, "terminal": T.SymbolKind.Boolean,
    "actor": T.SymbolKind.Variable, "rotate": T.SymbolKind.Operator,
    "field": T.SymbolKind.Field, "value": T.SymbolKind.EnumMember,
    "option": T.SymbolKind.EnumMember, "rule": T.SymbolKind.Key,
}
_COMPLETION_KINDS = {
    "local": T.CompletionItemKind.Variable, "state field": T.CompletionItemKind.Field,
    "record field": T.CompletionItemKind.Field, "param": T.CompletionItemKind.Constant,
    "const": T.CompletionItemKind.Constant, "type": T.CompletionItemKind.Class,
    "enum": T.CompletionItemKind.Enum, "record": T.CompletionItemKind.Struct,
    "reading": T.CompletionItemKind.Enum, "enum value": T.CompletionItemKind.EnumMember,
    "reading option": T.CompletionItemKind.EnumMember, "def": T.CompletionItemKind.Function,
    "proc": T.CompletionItemKind.Function, "action": T.CompletionItemKind.Method,
    "chance": T.CompletionItemKind.Method, "keyword": T.CompletionItemKind.Keyword,
    "builtin": T.CompletionItemKind.Function,
}


def _range(r) -> T.Range:
    return T.Range(T.Position(r[0], r[1]), T.Position(r[2], r[3]))


class RulesProtocol(LanguageServerProtocol):
    """pygls's protocol, except that a request whose parameters do not fit its method gets an
    error response (pygls logs it and never answers, and a client would wait forever)."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if isinstance(data, dict) and "id" in data and isinstance(data.get("method"), str):
                return JsonRPCRequestMessage(id=data["id"], method=INVALID, jsonrpc="2.0",
                                             params=data["method"])
            raise


def _converter():
    """lsprotocol's converter, passing plain JSON through as it is (the outline of a large
    file: see `document_symbol`)."""
    conv = default_converter()
    conv.register_unstructure_hook(dict, lambda d: d)
    return conv


class RulesServer(LanguageServer):
    """The server: the documents' latest analyses and the thread that makes them."""

    def __init__(self) -> None:
        super().__init__("rulebook", "0.1.0", protocol_cls=RulesProtocol,
                         converter_factory=_converter)
        self.project = A.Project()
        self.examples = Examples()
        self.analyses: dict[str, A.Analysis] = {}
        self.checker = CheckThread(self)

    # ---- documents -------------------------------------------------------------------

    def rules_document(self, uri: str):
        """The open document ``uri`` when it is a rules file, else None."""
        doc = self.workspace.text_documents.get(uri)
        if doc is None or not (uri.endswith(".rules") or doc.language_id == "rules"):
            return None
        return doc

    @staticmethod
    def doc_path(doc) -> Path | None:
        return Path(doc.path).resolve() if doc.uri.startswith("file:") and doc.path else None

    def doc_name(self, doc) -> str:
        path = self.doc_path(doc)
        return display(path) if path is not None else doc.uri

    def buffers(self) -> dict[Path, str]:
        out = {}
        for doc in list(self.workspace.text_documents.values()):
            path = self.doc_path(doc)
            if path is not None:
                out[path] = doc.source
        return out

    def analyse(self, uri: str):
        """Check the document ``uri`` as it is now (on the checking thread)."""
        doc = self.rules_document(uri)
        if doc is None:
            return None
        version, text = doc.version, doc.source
        an = self.project.analyse(self.doc_path(doc), self.doc_name(doc), text, self.buffers())
        return version, an

    def deliver(self, uri: str, version, an: A.Analysis) -> None:
        """A finished analysis (on the server's loop): kept, and its diagnostics published
        when the document has not changed since."""
        doc = self.rules_document(uri)
        if doc is None:
            return
        if an.index is not None or uri not in self.analyses:
            self.analyses[uri] = an
        if doc.version != version:
            return
        diags = [T.Diagnostic(range=_range(d.range), message=d.message, source="rulebook",
                              severity=T.DiagnosticSeverity.Error,
                              related_information=[
                                  T.DiagnosticRelatedInformation(
                                      T.Location(self.uri_of(an, f), _range(r)), m)
                                  for f, r, m in d.related] or None)
                 for d in an.diagnostics]
        self.text_document_publish_diagnostics(
            T.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version))

    def changed(self, uri: str, delay: float) -> None:
        """Check ``uri`` again, and every open document that reads it (one that extends it)."""
        self.checker.start(asyncio.get_running_loop())
        self.checker.request(uri, delay)
        doc = self.workspace.text_documents.get(uri)
        path = self.doc_path(doc) if doc is not None else None
        for other, an in list(self.analyses.items()):
            if other != uri and path is not None and path in an.paths.values():
                self.checker.request(other, delay + DEBOUNCE)

    def uri_of(self, an: A.Analysis, name: str) -> str:
        if name == an.name and an.path is None:
            return name
        path = an.paths.get(name)
        return (path if path is not None else Path(name).resolve()).as_uri()

    def analysis_of(self, uri: str) -> tuple[object, A.Analysis | None]:
        doc = self.rules_document(uri)
        return doc, (self.analyses.get(uri) if doc is not None else None)


class CheckThread:
    """The checking thread: one document at a time, the one whose text settled first; a
    daemon, so that a long check never holds the server's exit."""

    def __init__(self, server: RulesServer) -> None:
        self.server = server
        self.cond = threading.Condition()
        self.due: dict[str, float] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.primed = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.loop is None:
            self.loop = loop
            threading.Thread(target=self.run, name="rulebook-check", daemon=True).start()

    def request(self, uri: str, delay: float) -> None:
        with self.cond:
            self.due[uri] = time.monotonic() + delay
            self.cond.notify()

    def next(self) -> str | None:
        """The next document to check, once its time has come; None, first, to find the
        examples of the keywords' hovers."""
        with self.cond:
            if not self.primed:
                self.primed = True
                return None
            while True:
                if not self.due:
                    self.cond.wait()
                    continue
                uri, at = min(self.due.items(), key=lambda kv: kv[1])
                now = time.monotonic()
                if at > now:
                    self.cond.wait(at - now)
                    continue
                del self.due[uri]
                return uri

    def run(self) -> None:
        while True:
            uri = self.next()
            try:
                if uri is None:
                    self.server.examples.prime()
                    continue
                done = self.server.analyse(uri)
                if done is not None:
                    self.loop.call_soon_threadsafe(self.server.deliver, uri, *done)
            except Exception:  # noqa: BLE001 - a failed check must not stop the thread
                log.exception("checking %s failed", uri)


def build() -> RulesServer:
    """The server with its features."""
    ls = RulesServer()

    @ls.feature(INVALID)
    def invalid(ls: RulesServer, method):
        raise JsonRpcInvalidParams(f"the parameters do not fit {method!r}")

    @ls.feature(T.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RulesServer, params: T.DidOpenTextDocumentParams):
        # A large file is checked after the requests an editor makes on opening it (the
        # outline...): the check holds the interpreter half of the time while it runs.
        if ls.rules_document(params.text_document.uri) is not None:
            ls.changed(params.text_document.uri, len(params.text_document.text) / LARGE)

    @ls.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RulesServer, params: T.DidChangeTextDocumentParams):
        if ls.rules_document(params.text_document.uri) is not None:
            ls.changed(params.text_document.uri, DEBOUNCE)

    @ls.feature(T.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RulesServer, params: T.DidSaveTextDocumentParams):
        if ls.rules_document(params.text_document.uri) is not None:
            ls.changed(params.text_document.uri, 0.0)

    @ls.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RulesServer, params: T.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        if ls.analyses.pop(uri, None) is not None:
            ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri,
                                                                            diagnostics=[]))

    @ls.feature(T.TEXT_DOCUMENT_HOVER)
    def hover(ls: RulesServer, params: T.HoverParams):
        doc, an = ls.analysis_of(params.text_document.uri)
        if doc is None:
            return None
        p = params.position
        text = A.hover(an, doc.source, p.line, p.character, ls.examples)
        if text is None:
            return None
        return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=text))

    @ls.feature(T.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: RulesServer, params: T.DefinitionParams):
        doc, an = ls.analysis_of(params.text_document.uri)
        if an is None:
            return None
        p = params.position
        return [T.Location(ls.uri_of(an, f), _range(r))
                for f, r in A.definition(an, p.line, p.character)] or None

    @ls.feature(T.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: RulesServer, params: T.ReferenceParams):
        doc, an = ls.analysis_of(params.text_document.uri)
        if an is None or an.index is None:
            return None
        p = params.position
        family = await asyncio.to_thread(ls.project.family, an, ls.buffers())
        return [T.Location(ls.uri_of(an, f), _range(r))
                for f, r in A.references(an, family, p.line, p.character,
                                         params.context.include_declaration)] or None

    @ls.feature(T.TEXT_DOCUMENT_RENAME)
    async def rename(ls: RulesServer, params: T.RenameParams):
        doc, an = ls.analysis_of(params.text_document.uri)
        if an is None or an.index is None:
            raise JsonRpcInvalidParams("the document is not checked yet")
        p = params.position
        family = await asyncio.to_thread(ls.project.family, an, ls.buffers())
        try:
            edits = A.rename(an, family, p.line, p.character, params.new_name)
        except A.Refused as e:
            raise JsonRpcInvalidParams(str(e)) from None
        return T.WorkspaceEdit(changes={
            ls.uri_of(an, f): [T.TextEdit(_range(r), params.new_name) for r in rs]
            for f, rs in edits.items()})

    @ls.feature(T.TEXT_DOCUMENT_COMPLETION, T.CompletionOptions(trigger_characters=["."]))
    def completion(ls: RulesServer, params: T.CompletionParams):
        doc, an = ls.analysis_of(params.text_document.uri)
        if doc is None:
            return None
        p = params.position
        items = [T.CompletionItem(label=c.label, kind=_COMPLETION_KINDS.get(c.kind),
                                  detail=c.detail or c.kind,
                                  documentation=c.doc or None)
                 for c in A.completion(an, doc.source, p.line, p.character)]
        return T.CompletionList(is_incomplete=False, items=items)

    @ls.feature(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: RulesServer, params: T.DocumentSymbolParams):
        doc = ls.rules_document(params.text_document.uri)
        if doc is None:
            return None
        text = doc.source
        lines = lexical.Lines(text)

        # Plain JSON, not lsprotocol's objects: a large file has thousands of symbols, and
        # building and converting the objects costs ten times the outline itself.
        def rng(a: int, b: int) -> dict:
            (l0, c0), (l1, c1) = lines.position(a), lines.position(b)
            return {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}}

        def sym(s: lexical.Symbol) -> dict:
            out = {"name": s.name, "detail": s.kind,
                   "kind": int(_SYMBOL_KINDS.get(s.kind, T.SymbolKind.Object)),
                   "range": rng(s.start, s.end), "selectionRange": rng(s.name_start, s.name_end)}
            if s.children:
                out["children"] = [sym(c) for c in s.children]
            return out

        return [sym(s) for s in lexical.outline(text)]

    return ls


def serve() -> None:
    """Run the server on stdin and stdout until the client says exit."""
    build().start_io()
