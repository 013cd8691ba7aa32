"""The language server over stdio (pygls): the protocol's requests and notifications, answered
by `analysis` and `lexical`.

Checking a document takes from a fraction of a second to a minute (a 1 MB file), so it runs in
a process of its own (`worker`): a document is checked when it opens and again once its text
has not changed for a moment, the newest text only, and its diagnostics are published when
that text is still the document's.  Requests never wait for it nor share an interpreter with
it: they read the latest analysis (of a slightly older text while one is under way), and what
needs no analysis (the outline, the meaning of a keyword) is read from the text as it is.

Positions are in the units the client and the server agreed on (UTF-16 code units unless the
client offers another encoding): converted from and to the code points the analyses count at
the edge, by `lexical.Text`."""
from __future__ import annotations

import logging
from bisect import bisect_right
from pathlib import Path

from lsprotocol import types as T
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCRequestMessage, LanguageServerProtocol, default_converter

from ..lang.sources import display, gc_paused
from . import analysis as A
from . import lexical
from .reference import Examples
from .worker import Worker, WorkerError

log = logging.getLogger(__name__)

# Seconds without a change before a document is checked again.
DEBOUNCE = 0.3
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
_SYMBOL_NUMBERS = {k: int(v) for k, v in _SYMBOL_KINDS.items()}
_OBJECT = int(T.SymbolKind.Object)
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
    """lsprotocol's converter, passing plain JSON through as it is (the outline and the
    completions of a large file: see `document_symbol`)."""
    conv = default_converter()
    conv.register_unstructure_hook(dict, lambda d: d)
    return conv


class RulesServer(LanguageServer):
    """The server: the documents' latest analyses, and the process that makes them."""

    def __init__(self) -> None:
        super().__init__("rulebook", "0.1.0", protocol_cls=RulesProtocol,
                         converter_factory=_converter)
        self.examples = Examples()
        self.analyses: dict[str, A.Analysis] = {}
        self.texts: dict[str, lexical.Text] = {}
        self.worker = Worker(self)

    # ---- documents -------------------------------------------------------------------

    def rules_document(self, uri: str):
        """The open document ``uri`` when it is a rules file, else None."""
        doc = self.workspace.text_documents.get(uri)
        if doc is None or not (uri.endswith(".rules") or doc.language_id == "rules"):
            return None
        return doc

    def text(self, doc) -> lexical.Text:
        """The document's text as it is now, its lines found once per version."""
        t = self.texts.get(doc.uri)
        if t is None or t.text is not doc.source:
            t = self.texts[doc.uri] = lexical.Text(doc.source)
        return t

    def encoding(self) -> str:
        """The position encoding agreed with the client ("utf-16" unless it chose another)."""
        enc = self.workspace.position_encoding
        return str(getattr(enc, "value", enc) or "utf-16")

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

    # ---- checking --------------------------------------------------------------------

    def job(self, uri: str):
        """What the checking process needs to check ``uri`` as it is now; None when it is
        closed."""
        doc = self.rules_document(uri)
        if doc is None:
            return None
        path = self.doc_path(doc)
        others = {p: t for p, t in self.buffers().items() if p != path}
        return doc.version, path, self.doc_name(doc), doc.source, others

    def deliver(self, uri: str, version, an: A.Analysis) -> None:
        """A finished analysis: kept, and its diagnostics published when the document has not
        changed since (an older one's are dropped)."""
        doc = self.rules_document(uri)
        if doc is None:
            return
        if an.index is not None or uri not in self.analyses:
            self.analyses[uri] = an
        if doc.version != version:
            return
        enc = self.encoding()
        here = self.text(doc)

        def where(name: str, r):
            idx = an.indexes.get(name)
            return _range(lexical.Text(idx.text).range_to_units(r, enc) if idx else r)

        diags = [T.Diagnostic(range=_range(here.range_to_units(d.range, enc)),
                              message=d.message, source="rulebook",
                              severity=T.DiagnosticSeverity.Error,
                              related_information=[
                                  T.DiagnosticRelatedInformation(
                                      T.Location(A.uri_of(an, f), where(f, r)), m)
                                  for f, r, m in d.related] or None)
                 for d in an.diagnostics]
        self.text_document_publish_diagnostics(
            T.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version))

    def changed(self, uri: str, delay: float) -> None:
        """Check ``uri`` again, and every open document that reads it (one that extends it)."""
        self.worker.request(uri, delay)
        doc = self.workspace.text_documents.get(uri)
        path = self.doc_path(doc) if doc is not None else None
        for other, an in list(self.analyses.items()):
            if other != uri and path is not None and path in an.paths.values():
                self.worker.request(other, delay + DEBOUNCE)

    def analysis_of(self, uri: str) -> tuple[object, A.Analysis | None]:
        doc = self.rules_document(uri)
        return doc, (self.analyses.get(uri) if doc is not None else None)

    def at(self, doc, position: T.Position) -> tuple[int, int]:
        """A position of the client as a line and a column in code points."""
        line = position.line
        return line, self.text(doc).from_units(line, position.character, self.encoding())

    def location(self, an: A.Analysis, name: str, r) -> T.Location:
        """A range of the file ``name`` of a document's chain, for the client."""
        idx = an.indexes.get(name)
        if idx is not None:
            r = lexical.Text(idx.text).range_to_units(r, self.encoding())
        return T.Location(A.uri_of(an, name), _range(r))


def build() -> RulesServer:
    """The server with its features."""
    ls = RulesServer()

    @ls.feature(INVALID)
    def invalid(ls: RulesServer, method):
        raise JsonRpcInvalidParams(f"the parameters do not fit {method!r}")

    @ls.feature(T.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RulesServer, params: T.DidOpenTextDocumentParams):
        if ls.rules_document(params.text_document.uri) is not None:
            ls.changed(params.text_document.uri, 0.0)

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
        ls.texts.pop(uri, None)
        ls.worker.close(uri)
        if ls.analyses.pop(uri, None) is not None:
            ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri,
                                                                            diagnostics=[]))

    @ls.feature(T.SHUTDOWN)
    def shutdown(ls: RulesServer, params):
        ls.worker.stop()

    @ls.feature(T.EXIT)
    def exit_(ls: RulesServer, params):
        ls.worker.stop()

    @ls.feature(T.TEXT_DOCUMENT_HOVER)
    async def hover(ls: RulesServer, params: T.HoverParams):
        doc, an = ls.analysis_of(params.text_document.uri)
        if doc is None:
            return None
        line, col = ls.at(doc, params.position)
        d = A.hovered(an, line, col)
        if d is not None:
            text = A.describe(d, await ls.worker.english(params.text_document.uri, d))
        else:
            text = A.keyword_hover(ls.text(doc), line, col, ls.examples)
        if text is None:
            return None
        return T.Hover(contents=T.MarkupContent(kind=T.MarkupKind.Markdown, value=text))

    @ls.feature(T.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: RulesServer, params: T.DefinitionParams):
        doc, an = ls.analysis_of(params.text_document.uri)
        if an is None:
            return None
        line, col = ls.at(doc, params.position)
        return [ls.location(an, f, r) for f, r in A.definition(an, line, col)] or None

    async def ask(kind: str, *args):
        try:
            return await ls.worker.ask(kind, *args)
        except (WorkerError, TimeoutError) as e:
            raise JsonRpcInvalidParams(str(e) or "no answer in time") from None

    @ls.feature(T.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: RulesServer, params: T.ReferenceParams):
        doc, an = ls.analysis_of(params.text_document.uri)
        if an is None or an.index is None:
            return None
        line, col = ls.at(doc, params.position)
        found = await ask("references", params.text_document.uri, line, col,
                          params.context.include_declaration, ls.buffers(), ls.encoding())
        return [T.Location(u, _range(r)) for u, r in found] or None

    @ls.feature(T.TEXT_DOCUMENT_RENAME)
    async def rename(ls: RulesServer, params: T.RenameParams):
        doc, an = ls.analysis_of(params.text_document.uri)
        if an is None or an.index is None:
            raise JsonRpcInvalidParams("the document is not checked yet")
        line, col = ls.at(doc, params.position)
        edits = await ask("rename", params.text_document.uri, line, col, params.new_name,
                          ls.buffers(), ls.encoding())
        return T.WorkspaceEdit(changes={
            u: [T.TextEdit(_range(r), params.new_name) for r in rs] for u, rs in edits.items()})

    @ls.feature(T.TEXT_DOCUMENT_COMPLETION, T.CompletionOptions(trigger_characters=["."]))
    def completion(ls: RulesServer, params: T.CompletionParams):
        doc, an = ls.analysis_of(params.text_document.uri)
        if doc is None:
            return None
        line, col = ls.at(doc, params.position)
        # Plain JSON, as the outline: a large file offers thousands of names.
        items = []
        with gc_paused():
            for c in A.completion(an, ls.text(doc), line, col):
                item = {"label": c.label, "detail": c.detail or c.kind}
                kind = _COMPLETION_KINDS.get(c.kind)
                if kind is not None:
                    item["kind"] = int(kind)
                if c.doc:
                    item["documentation"] = c.doc
                items.append(item)
        return {"isIncomplete": False, "items": items}

    @ls.feature(T.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: RulesServer, params: T.DocumentSymbolParams):
        doc = ls.rules_document(params.text_document.uri)
        if doc is None:
            return None
        text = ls.text(doc)
        starts = text.starts
        enc = ls.encoding()
        plain = text.plain(enc)

        # Plain JSON, not lsprotocol's objects: a large file has thousands of symbols, and
        # building and converting the objects costs ten times the outline itself.
        def rng(a: int, b: int) -> dict:
            l0, l1 = bisect_right(starts, a) - 1, bisect_right(starts, b) - 1
            c0, c1 = a - starts[l0], b - starts[l1]
            if not plain:
                c0, c1 = text.to_units(l0, c0, enc), text.to_units(l1, c1, enc)
            return {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}}

        def sym(s: lexical.Symbol) -> dict:
            out = {"name": s.name, "detail": s.kind,
                   "kind": _SYMBOL_NUMBERS.get(s.kind, _OBJECT),
                   "range": rng(s.start, s.end), "selectionRange": rng(s.name_start, s.name_end)}
            if s.children:
                out["children"] = [sym(c) for c in s.children]
            return out

        # Without the cycle collector, which would scan the analyses kept for every new
        # thousand dicts (a third of the time on a large file, once checked).
        with gc_paused():
            return [sym(s) for s in lexical.outline(text.text)]

    return ls


def serve() -> None:
    """Run the server on stdin and stdout until the client says exit (or closes stdin)."""
    ls = build()
    try:
        ls.start_io()
    finally:
        ls.worker.stop()
