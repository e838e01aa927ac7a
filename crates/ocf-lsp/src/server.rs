//! The server loop: the initialize handshake, then one message at a time. Edits update the
//! files' inputs at once; the diagnostics of the open files they may change are published when
//! no message is waiting, so a burst of keystrokes is checked once (coalesced) and a request
//! that came meanwhile is answered first; a request cancelled while it waited is answered with
//! `RequestCanceled`. Each request is answered in a `tracing` span, and a request that fails (a
//! bad parameter, a panic in a feature) is answered with an error while the server goes on.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    Cancel, DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument,
    DidOpenTextDocument, DidSaveTextDocument, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    Completion, DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest, RangeFormatting,
    References, Request as _,
};
use lsp_types::{
    CompletionOptions, Diagnostic, DiagnosticSeverity, DocumentSymbolResponse, FileChangeType,
    GotoDefinitionResponse, InitializeParams, NumberOrString, OneOf, Position,
    PublishDiagnosticsParams, ServerCapabilities, TextDocumentContentChangeEvent,
    TextDocumentSyncCapability, TextDocumentSyncKind, Url,
};
use serde_json::{Value, json};

use crate::db::{Database, Pack, SourceFile, file_diagnostics, file_index};
use crate::world::World;

pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        document_range_formatting_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".to_owned(), ":".to_owned(), " ".to_owned()]),
            ..CompletionOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}

/// The server's capabilities as sent: [`capabilities`] with the features lsp-types' struct is
/// given as JSON for.
pub fn capabilities_json() -> Value {
    let mut caps = serde_json::to_value(capabilities()).unwrap_or_else(|_| json!({}));
    let extra = json!({
        "renameProvider": { "prepareProvider": true },
        "codeActionProvider": { "codeActionKinds": ["quickfix"] },
        "documentHighlightProvider": true,
        "workspaceSymbolProvider": true,
        "foldingRangeProvider": true,
        "selectionRangeProvider": true,
        "signatureHelpProvider": { "triggerCharacters": ["(", ","], "retriggerCharacters": [","] },
        "semanticTokensProvider": {
            "legend": { "tokenTypes": crate::features::TOKEN_TYPES, "tokenModifiers": [] },
            "full": true,
        },
        "inlayHintProvider": true,
        "diagnosticProvider": {
            "identifier": "ocf",
            "interFileDependencies": true,
            "workspaceDiagnostics": true,
        },
    });
    if let (Some(caps), Some(extra)) = (caps.as_object_mut(), extra.as_object()) {
        caps.extend(extra.clone());
    }
    caps
}

/// Waits for `initialize` (answering other requests with `ServerNotInitialized`) and answers it;
/// `None` when the connection ends or the client exits first.
fn handshake(connection: &Connection) -> Option<Value> {
    loop {
        match connection.receiver.recv().ok()? {
            Message::Request(request) if request.method == "initialize" => {
                let result = json!({
                    "capabilities": capabilities_json(),
                    "serverInfo": { "name": "ocf", "version": env!("CARGO_PKG_VERSION") },
                });
                let _ = connection
                    .sender
                    .send(Message::Response(Response::new_ok(request.id, result)));
                return Some(request.params);
            }
            Message::Request(request) => {
                let _ = connection.sender.send(Message::Response(Response::new_err(
                    request.id,
                    ErrorCode::ServerNotInitialized as i32,
                    "the server waits for `initialize`".to_owned(),
                )));
            }
            Message::Notification(n) if n.method == "exit" => return None,
            _ => {}
        }
    }
}

/// The most messages read ahead of the one being handled.
const MAX_PENDING: usize = 4096;

/// Serves one connection until the client's `exit` (or the connection closes).
pub fn serve(connection: &Connection) -> Result<(), String> {
    let Some(params) = handshake(connection) else {
        return Ok(());
    };
    let params: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let watches = params
        .capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|w| w.dynamic_registration)
        == Some(true);
    let mut server = Server {
        world: World::new(Database::default()),
        published: BTreeMap::new(),
        versions: HashMap::new(),
        characters: HashMap::new(),
        rulesets: Default::default(),
        shutting_down: false,
    };
    #[allow(deprecated)]
    let mut folders: Vec<PathBuf> = params
        .workspace_folders
        .unwrap_or_default()
        .iter()
        .filter_map(|f| f.uri.to_file_path().ok())
        .collect();
    #[allow(deprecated)]
    if folders.is_empty()
        && let Some(root) = params.root_uri.and_then(|u| u.to_file_path().ok())
    {
        folders.push(root);
    }
    for folder in folders {
        let _span = tracing::info_span!("load_folder", folder = %folder.display()).entered();
        server.world.add_folder(&folder);
    }
    if watches {
        // Files changed by other programs are sent to the server only if it asks for them. The
        // client's answer is not waited for: without it the server still works on what is open.
        let register = watch_registration();
        connection
            .sender
            .send(Message::Request(Request::new(
                "watch-pack-files".to_owned().into(),
                "client/registerCapability".to_owned(),
                register,
            )))
            .map_err(|e| e.to_string())?;
    }
    let send = |message: Message| connection.sender.send(message).map_err(|e| e.to_string());
    let (jobs, job_receiver) = crossbeam_channel::unbounded::<Job>();
    let (done_sender, done) = crossbeam_channel::unbounded::<Option<Vec<Checked>>>();
    let checker = spawn_checker(job_receiver, done_sender);
    let mut pending: VecDeque<Message> = VecDeque::new();
    // The packs whose open files' diagnostics wait to be checked, and those being checked.
    let mut dirty: Vec<Pack> = Vec::new();
    let mut in_flight: Option<Vec<Pack>> = None;
    let outcome = (|| -> Result<(), String> {
        loop {
            while pending.len() < MAX_PENDING {
                match connection.receiver.try_recv() {
                    Ok(message) => pending.push_back(message),
                    Err(_) => break,
                }
            }
            let finished = done.try_recv().ok();
            if let Some(results) = finished {
                let packs = in_flight.take().unwrap_or_default();
                match results {
                    Some(results) => {
                        for out in server.publish_results(results) {
                            send(Message::Notification(out))?;
                        }
                    }
                    None => add(&mut dirty, &packs),
                }
                continue;
            }
            let Some(message) = pending.pop_front() else {
                // Nothing waits: the edits so far are checked, once, beside the requests.
                if in_flight.is_none() && !dirty.is_empty() {
                    let packs = std::mem::take(&mut dirty);
                    let files = server.job_files(&packs);
                    let db = server.world.db.clone();
                    jobs.send(Job { db, files }).map_err(|e| e.to_string())?;
                    in_flight = Some(packs);
                }
                crossbeam_channel::select! {
                    recv(connection.receiver) -> message => match message {
                        Ok(message) => pending.push_back(message),
                        Err(_) => return Ok(()),
                    },
                    recv(done) -> results => {
                        let packs = in_flight.take().unwrap_or_default();
                        match results.map_err(|e| e.to_string())? {
                            Some(results) => {
                                for out in server.publish_results(results) {
                                    send(Message::Notification(out))?;
                                }
                            }
                            None => add(&mut dirty, &packs),
                        }
                    },
                }
                continue;
            };
            match message {
                Message::Request(request) => {
                    let cancelled = pending.iter().any(|m| {
                        matches!(m, Message::Notification(n) if n.method == Cancel::METHOD
                            && cancelled_id(&n.params).as_ref() == Some(&request.id))
                    });
                    if cancelled {
                        send(Message::Response(Response::new_err(
                            request.id,
                            ErrorCode::RequestCanceled as i32,
                            "cancelled by the client".to_owned(),
                        )))?;
                        continue;
                    }
                    if request.method == "ocf/sync" {
                        // Answered once everything before it is done, diagnostics published.
                        loop {
                            if in_flight.is_some() {
                                let results = done.recv().map_err(|e| e.to_string())?;
                                let packs = in_flight.take().unwrap_or_default();
                                match results {
                                    Some(results) => {
                                        for out in server.publish_results(results) {
                                            send(Message::Notification(out))?;
                                        }
                                    }
                                    None => add(&mut dirty, &packs),
                                }
                            } else if !dirty.is_empty() {
                                let packs = std::mem::take(&mut dirty);
                                let files = server.job_files(&packs);
                                let db = server.world.db.clone();
                                jobs.send(Job { db, files }).map_err(|e| e.to_string())?;
                                in_flight = Some(packs);
                            } else {
                                break;
                            }
                        }
                        send(Message::Response(Response::new_ok(request.id, ())))?;
                        continue;
                    }
                    let response = server.request(request);
                    send(Message::Response(response))?;
                }
                Message::Notification(notification) => {
                    if notification.method == "exit" {
                        return Ok(());
                    }
                    let (changed, immediate) = server.notification(notification);
                    for out in immediate {
                        send(Message::Notification(out))?;
                    }
                    add(&mut dirty, &changed);
                }
                Message::Response(_) => {}
            }
        }
    })();
    drop(jobs);
    let _ = checker.join();
    outcome
}

fn add(dirty: &mut Vec<Pack>, packs: &[Pack]) {
    for pack in packs {
        if !dirty.contains(pack) {
            dirty.push(*pack);
        }
    }
}

fn cancelled_id(params: &Value) -> Option<lsp_server::RequestId> {
    match params.get("id")? {
        Value::Number(n) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .map(Into::into),
        Value::String(s) => Some(s.clone().into()),
        _ => None,
    }
}

/// Serves a connection over a byte stream (stdin and stdout, or a test's pipes) with the
/// tolerant framing of [`crate::transport`]; returns when the client exits or the stream ends.
pub fn serve_streams<R, W>(input: R, output: W) -> Result<(), String>
where
    R: std::io::Read + Send + 'static,
    W: std::io::Write + Send + 'static,
{
    let (connection, io) = crate::transport::connect(input, output);
    let outcome = serve(&connection);
    drop(connection);
    io.join();
    outcome
}

/// The registration of `workspace/didChangeWatchedFiles` for the files the build reads.
fn watch_registration() -> lsp_types::RegistrationParams {
    let watcher = |glob: &str| lsp_types::FileSystemWatcher {
        glob_pattern: lsp_types::GlobPattern::String(glob.to_owned()),
        kind: None,
    };
    let options = lsp_types::DidChangeWatchedFilesRegistrationOptions {
        watchers: vec![watcher("**/pack.yaml"), watcher("**/*.yaml")],
    };
    lsp_types::RegistrationParams {
        registrations: vec![lsp_types::Registration {
            id: "ocf-pack-files".to_owned(),
            method: DidChangeWatchedFiles::METHOD.to_owned(),
            register_options: serde_json::to_value(options).ok(),
        }],
    }
}

pub struct Server {
    pub world: World,
    /// What was last published for each open file.
    published: BTreeMap<PathBuf, Vec<Diagnostic>>,
    /// The version of each open file's text, from the editor.
    versions: HashMap<PathBuf, i32>,
    /// The text of each open file outside every pack (a character file, perhaps), by path.
    characters: HashMap<PathBuf, String>,
    /// The ruleset last made for an open character file.
    rulesets: crate::character::Rulesets,
    shutting_down: bool,
}

fn path_of(uri: &Url) -> Option<PathBuf> {
    uri.to_file_path().ok()
}

impl Server {
    fn request(&mut self, request: Request) -> Response {
        let id = request.id.clone();
        let span = tracing::info_span!("request", method = %request.method);
        let _entered = span.enter();
        if request.method == "shutdown" {
            self.shutting_down = true;
            return Response::new_ok(id, ());
        }
        if self.shutting_down {
            return Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down".to_owned(),
            );
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| self.answer(&request)));
        match outcome {
            Ok(Ok(value)) => Response::new_ok(id, value),
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message),
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "the request failed".to_owned());
                tracing::error!(%message, "request panicked");
                Response::new_err(id, ErrorCode::InternalError as i32, message)
            }
        }
    }

    fn answer(&mut self, request: &Request) -> Result<Value, (ErrorCode, String)> {
        let params = request.params.clone();
        let bad = |e: serde_json::Error| (ErrorCode::InvalidParams, e.to_string());
        let json =
            |v: serde_json::Result<Value>| v.map_err(|e| (ErrorCode::InternalError, e.to_string()));
        match request.method.as_str() {
            HoverRequest::METHOD => {
                let p: lsp_types::HoverParams = serde_json::from_value(params).map_err(bad)?;
                let at = &p.text_document_position_params;
                let Some((pack, file, offset)) = self.at(&at.text_document.uri, at.position) else {
                    return Ok(Value::Null);
                };
                json(serde_json::to_value(crate::ide::hover(
                    &self.world,
                    pack,
                    file,
                    offset,
                )))
            }
            GotoDefinition::METHOD => {
                let p: lsp_types::GotoDefinitionParams =
                    serde_json::from_value(params).map_err(bad)?;
                let at = &p.text_document_position_params;
                let Some((pack, file, offset)) = self.at(&at.text_document.uri, at.position) else {
                    return Ok(Value::Null);
                };
                let found = crate::ide::definition(&self.world, pack, file, offset);
                if found.is_empty() {
                    return Ok(Value::Null);
                }
                json(serde_json::to_value(GotoDefinitionResponse::Array(found)))
            }
            References::METHOD => {
                let p: lsp_types::ReferenceParams = serde_json::from_value(params).map_err(bad)?;
                let at = &p.text_document_position;
                let Some((pack, file, offset)) = self.at(&at.text_document.uri, at.position) else {
                    return Ok(Value::Null);
                };
                let found = crate::ide::references(
                    &self.world,
                    pack,
                    file,
                    offset,
                    p.context.include_declaration,
                );
                json(serde_json::to_value(found))
            }
            Completion::METHOD => {
                let p: lsp_types::CompletionParams = serde_json::from_value(params).map_err(bad)?;
                let at = &p.text_document_position;
                let Some((pack, file, offset)) = self.at(&at.text_document.uri, at.position) else {
                    return Ok(Value::Null);
                };
                let items = crate::complete::complete(&self.world, pack, file, offset);
                json(serde_json::to_value(lsp_types::CompletionResponse::Array(
                    items,
                )))
            }
            DocumentSymbolRequest::METHOD => {
                let p: lsp_types::DocumentSymbolParams =
                    serde_json::from_value(params).map_err(bad)?;
                let Some((_, file)) = self.file(&p.text_document.uri) else {
                    return Ok(Value::Null);
                };
                let symbols = crate::ide::document_symbols(&self.world, file);
                json(serde_json::to_value(DocumentSymbolResponse::Nested(
                    symbols,
                )))
            }
            Formatting::METHOD => {
                let p: lsp_types::DocumentFormattingParams =
                    serde_json::from_value(params).map_err(bad)?;
                let Some((_, file)) = self.file(&p.text_document.uri) else {
                    return Ok(Value::Null);
                };
                json(serde_json::to_value(crate::ide::format(
                    &self.world,
                    file,
                    None,
                )))
            }
            RangeFormatting::METHOD => {
                let p: lsp_types::DocumentRangeFormattingParams =
                    serde_json::from_value(params).map_err(bad)?;
                let Some((pack, file, start)) = self.at(&p.text_document.uri, p.range.start) else {
                    return Ok(Value::Null);
                };
                let _ = pack;
                let end = self.offset(file, p.range.end);
                let span = crate::yaml::Span { start, end };
                json(serde_json::to_value(crate::ide::format(
                    &self.world,
                    file,
                    Some(span),
                )))
            }
            "textDocument/prepareRename" => {
                let p: lsp_types::TextDocumentPositionParams =
                    serde_json::from_value(params).map_err(bad)?;
                let Some((pack, file, offset)) = self.at(&p.text_document.uri, p.position) else {
                    return Ok(Value::Null);
                };
                match crate::features::prepare_rename(&self.world, pack, file, offset) {
                    Some(span) => {
                        let text = file.text(&self.world.db);
                        Ok(json!({
                            "range": crate::ide::range(&self.world, file, span),
                            "placeholder": text.get(span.start..span.end).unwrap_or_default(),
                        }))
                    }
                    None => Ok(Value::Null),
                }
            }
            "textDocument/rename" => {
                let p: lsp_types::RenameParams = serde_json::from_value(params).map_err(bad)?;
                let at = &p.text_document_position;
                let Some((pack, file, offset)) = self.at(&at.text_document.uri, at.position) else {
                    return Ok(Value::Null);
                };
                let edit = crate::features::rename(&self.world, pack, file, offset, &p.new_name)
                    .map_err(|m| (ErrorCode::InvalidParams, m))?;
                json(serde_json::to_value(edit))
            }
            "textDocument/documentHighlight" => {
                let p: lsp_types::DocumentHighlightParams =
                    serde_json::from_value(params).map_err(bad)?;
                let at = &p.text_document_position_params;
                let Some((pack, file, offset)) = self.at(&at.text_document.uri, at.position) else {
                    return Ok(Value::Null);
                };
                json(serde_json::to_value(crate::features::highlights(
                    &self.world,
                    pack,
                    file,
                    offset,
                )))
            }
            "workspace/symbol" => {
                let p: lsp_types::WorkspaceSymbolParams =
                    serde_json::from_value(params).map_err(bad)?;
                json(serde_json::to_value(crate::features::workspace_symbols(
                    &self.world,
                    &p.query,
                )))
            }
            "textDocument/foldingRange" => {
                let p: lsp_types::FoldingRangeParams =
                    serde_json::from_value(params).map_err(bad)?;
                let Some((_, file)) = self.file(&p.text_document.uri) else {
                    return Ok(Value::Null);
                };
                json(serde_json::to_value(crate::features::folding_ranges(
                    &self.world,
                    file,
                )))
            }
            "textDocument/selectionRange" => {
                let p: lsp_types::SelectionRangeParams =
                    serde_json::from_value(params).map_err(bad)?;
                let Some((_, file)) = self.file(&p.text_document.uri) else {
                    return Ok(Value::Null);
                };
                let ranges: Vec<lsp_types::SelectionRange> = p
                    .positions
                    .iter()
                    .take(1000)
                    .map(|position| {
                        let offset = self.offset(file, *position);
                        crate::features::selection_range(&self.world, file, offset)
                    })
                    .collect();
                json(serde_json::to_value(ranges))
            }
            "textDocument/signatureHelp" => {
                let p: lsp_types::SignatureHelpParams =
                    serde_json::from_value(params).map_err(bad)?;
                let at = &p.text_document_position_params;
                let Some((_, file, offset)) = self.at(&at.text_document.uri, at.position) else {
                    return Ok(Value::Null);
                };
                json(serde_json::to_value(crate::features::signature_help(
                    &self.world,
                    file,
                    offset,
                )))
            }
            "textDocument/codeAction" => {
                let p: lsp_types::CodeActionParams = serde_json::from_value(params).map_err(bad)?;
                let uri = p.text_document.uri.clone();
                let Some((pack, file, start)) = self.at(&uri, p.range.start) else {
                    return Ok(Value::Null);
                };
                let end = self.offset(file, p.range.end);
                let within = crate::yaml::Span { start, end };
                let diagnostics = self.diagnostics(pack, file);
                let mut fixes = crate::features::fixes(&self.world, pack, file, within);
                fixes.extend(crate::translations::fixes(&self.world, pack, file, within));
                let actions: Vec<Value> = fixes
                    .into_iter()
                    .map(|fix| {
                        let mut changes: BTreeMap<String, Vec<lsp_types::TextEdit>> =
                            BTreeMap::new();
                        for (f, span, new_text) in &fix.edits {
                            let Some(path) = self.world.path_of(*f) else {
                                continue;
                            };
                            let Ok(uri) = Url::from_file_path(path) else {
                                continue;
                            };
                            changes.entry(uri.to_string()).or_default().push(
                                lsp_types::TextEdit::new(
                                    crate::ide::range(&self.world, *f, *span),
                                    new_text.clone(),
                                ),
                            );
                        }
                        json!({
                            "title": fix.title,
                            "kind": "quickfix",
                            "diagnostics": diagnostics.get(fix.diagnostic).into_iter().collect::<Vec<_>>(),
                            "edit": { "changes": changes },
                        })
                    })
                    .collect();
                Ok(Value::Array(actions))
            }
            "textDocument/semanticTokens/full" => {
                let p: lsp_types::SemanticTokensParams =
                    serde_json::from_value(params).map_err(bad)?;
                let Some((_, file)) = self.file(&p.text_document.uri) else {
                    return Ok(Value::Null);
                };
                Ok(json!({ "data": crate::features::semantic_tokens(&self.world, file) }))
            }
            "textDocument/inlayHint" => {
                let p: lsp_types::InlayHintParams = serde_json::from_value(params).map_err(bad)?;
                if let Some(path) = path_of(&p.text_document.uri)
                    && let Some(text) = self.characters.get(&path)
                {
                    return json(serde_json::to_value(crate::character::inlay_hints(
                        &mut self.world,
                        &mut self.rulesets,
                        &path,
                        text,
                        p.range.start.line,
                        p.range.end.line,
                    )));
                }
                let Some((pack, file, start)) = self.at(&p.text_document.uri, p.range.start) else {
                    return Ok(Value::Null);
                };
                let end = self.offset(file, p.range.end);
                let within = crate::yaml::Span { start, end };
                json(serde_json::to_value(crate::features::inlay_hints(
                    &self.world,
                    pack,
                    file,
                    within,
                )))
            }
            "textDocument/diagnostic" => {
                let p: lsp_types::DocumentDiagnosticParams =
                    serde_json::from_value(params).map_err(bad)?;
                let Some((pack, file)) = self.file(&p.text_document.uri) else {
                    return Ok(json!({ "kind": "full", "items": [] }));
                };
                Ok(json!({ "kind": "full", "items": self.diagnostics(pack, file) }))
            }
            "workspace/diagnostic" => {
                let mut items = Vec::new();
                let packs: Vec<Pack> = self.world.packs().collect();
                for pack in packs {
                    for &file in pack.files(&self.world.db) {
                        let diagnostics = self.diagnostics(pack, file);
                        if diagnostics.is_empty() {
                            continue;
                        }
                        let Some(path) = self.world.path_of(file) else {
                            continue;
                        };
                        let Ok(uri) = Url::from_file_path(path) else {
                            continue;
                        };
                        let version = self.versions.get(path).copied();
                        items.push(json!({
                            "kind": "full",
                            "uri": uri,
                            "version": version,
                            "items": diagnostics,
                        }));
                    }
                }
                Ok(json!({ "items": items }))
            }
            other => Err((
                ErrorCode::MethodNotFound,
                format!("the server does not answer `{other}`"),
            )),
        }
    }

    fn file(&mut self, uri: &Url) -> Option<(Pack, SourceFile)> {
        self.world.file(&path_of(uri)?)
    }

    fn offset(&self, file: SourceFile, position: Position) -> usize {
        let text = file.text(&self.world.db);
        file_index(&self.world.db, file)
            .lines
            .offset(text, position)
    }

    fn at(&mut self, uri: &Url, position: Position) -> Option<(Pack, SourceFile, usize)> {
        let (pack, file) = self.file(uri)?;
        Some((pack, file, self.offset(file, position)))
    }

    /// Handles a notification; gives the packs whose diagnostics may have changed, and what to
    /// send at once (the empty diagnostics of a file closed).
    pub fn notification(&mut self, notification: Notification) -> (Vec<Pack>, Vec<Notification>) {
        let span = tracing::info_span!("notification", method = %notification.method);
        let _entered = span.enter();
        let mut immediate = Vec::new();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.notify(notification, &mut immediate)
        }));
        match outcome {
            Ok(changed) => (changed.unwrap_or_default(), immediate),
            Err(_) => {
                tracing::error!("a notification panicked");
                (Vec::new(), immediate)
            }
        }
    }

    /// Applies a notification; gives the packs whose files changed.
    fn notify(
        &mut self,
        notification: Notification,
        immediate: &mut Vec<Notification>,
    ) -> Option<Vec<Pack>> {
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let p: lsp_types::DidOpenTextDocumentParams =
                    serde_json::from_value(notification.params).ok()?;
                let path = path_of(&p.text_document.uri)?;
                if self.world.file(&path).is_none() {
                    // Outside every pack: kept for the character file's hints.
                    self.characters.insert(path, p.text_document.text);
                    return None;
                }
                let (pack, _) = self.world.set_text(&path, p.text_document.text)?;
                self.world.open.insert(path.clone());
                self.versions.insert(path, p.text_document.version);
                Some(vec![pack])
            }
            DidChangeTextDocument::METHOD => {
                let p: lsp_types::DidChangeTextDocumentParams =
                    serde_json::from_value(notification.params).ok()?;
                let path = path_of(&p.text_document.uri)?;
                let version = p.text_document.version;
                // A change older than the text's (delivered out of order) is not applied.
                if let Some(&known) = self.versions.get(&path)
                    && version <= known
                {
                    tracing::warn!(version, known, "a change out of order is ignored");
                    return None;
                }
                if let Some(text) = self.characters.get_mut(&path) {
                    for change in p.content_changes {
                        apply(text, change);
                    }
                    self.versions.insert(path, version);
                    return None;
                }
                let (_, file) = self.world.file(&path)?;
                let mut text = file.text(&self.world.db).clone();
                for change in p.content_changes {
                    apply(&mut text, change);
                }
                let (pack, _) = self.world.set_text(&path, text)?;
                if self.world.open.contains(&path) {
                    self.versions.insert(path, version);
                }
                Some(vec![pack])
            }
            DidCloseTextDocument::METHOD => {
                let p: lsp_types::DidCloseTextDocumentParams =
                    serde_json::from_value(notification.params).ok()?;
                let path = path_of(&p.text_document.uri)?;
                self.world.open.remove(&path);
                self.versions.remove(&path);
                if self.characters.remove(&path).is_some() {
                    return None;
                }
                // The editor forgets the file's diagnostics: none is published for a closed file.
                if self.published.remove(&path).is_some_and(|d| !d.is_empty()) {
                    immediate.push(Notification::new(
                        PublishDiagnostics::METHOD.to_owned(),
                        PublishDiagnosticsParams {
                            uri: p.text_document.uri.clone(),
                            diagnostics: Vec::new(),
                            version: None,
                        },
                    ));
                }
                // The file is what is on disk again.
                let limit = ocf_load::build::ReadLimits::default().max_file_bytes;
                let text = ocf_load::build::source::read_bounded(&path, "", limit)
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .unwrap_or_default();
                let (pack, _) = self.world.set_text(&path, text)?;
                Some(vec![pack])
            }
            DidChangeWatchedFiles::METHOD => {
                let p: lsp_types::DidChangeWatchedFilesParams =
                    serde_json::from_value(notification.params).ok()?;
                Some(self.watched(p.changes))
            }
            DidSaveTextDocument::METHOD => None,
            _ => None,
        }
    }

    /// Files changed on disk (created, changed or deleted by another program, or by a `git
    /// checkout`): a file the editor has open keeps the editor's text; another is read again,
    /// added to its pack or taken out of it. Gives the packs whose files changed.
    fn watched(&mut self, changes: Vec<lsp_types::FileEvent>) -> Vec<Pack> {
        let mut changed = Vec::new();
        for event in changes {
            let Some(path) = path_of(&event.uri) else {
                continue;
            };
            if self.world.open.contains(&path) {
                continue;
            }
            let pack = if event.typ == FileChangeType::DELETED {
                self.world.remove(&path)
            } else {
                // A file over the read limit is read as empty here; the build, which reads the
                // folder itself in `ocf check`, is what reports it.
                let limit = ocf_load::build::ReadLimits::default().max_file_bytes;
                let text = ocf_load::build::source::read_bounded(&path, "", limit)
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .unwrap_or_default();
                self.world.set_text(&path, text).map(|(pack, _)| pack)
            };
            if let Some(pack) = pack
                && !changed.contains(&pack)
            {
                changed.push(pack);
            }
        }
        changed
    }

    pub fn diagnostics(&self, pack: Pack, file: SourceFile) -> Vec<Diagnostic> {
        lsp_diagnostics(&self.world.db, pack, file)
    }

    /// What a diagnostics job checks: the open files of the packs and of the packs depending on
    /// them, each with its text's version.
    fn job_files(&mut self, packs: &[Pack]) -> Vec<(PathBuf, Pack, SourceFile, Option<i32>)> {
        let mut affected = Vec::new();
        for &pack in packs {
            for p in self.world.dependents(pack) {
                if !affected.contains(&p) {
                    affected.push(p);
                }
            }
        }
        let open: Vec<PathBuf> = self.world.open.iter().cloned().collect();
        open.into_iter()
            .filter_map(|path| {
                let (pack, file) = self.world.file(&path)?;
                affected.contains(&pack).then(|| {
                    let version = self.versions.get(&path).copied();
                    (path, pack, file, version)
                })
            })
            .collect()
    }

    /// The notifications for a job's results: each open file whose diagnostics changed.
    fn publish_results(&mut self, results: Vec<Checked>) -> Vec<Notification> {
        let mut out = Vec::new();
        for (path, version, diagnostics) in results {
            if !self.world.open.contains(&path) || self.published.get(&path) == Some(&diagnostics) {
                continue;
            }
            self.published.insert(path.clone(), diagnostics.clone());
            let Ok(uri) = Url::from_file_path(&path) else {
                continue;
            };
            out.push(Notification::new(
                PublishDiagnostics::METHOD.to_owned(),
                PublishDiagnosticsParams {
                    uri,
                    diagnostics,
                    version,
                },
            ));
        }
        out
    }
}

/// A file's diagnostics as the protocol sends them.
pub fn lsp_diagnostics(db: &Database, pack: Pack, file: SourceFile) -> Vec<Diagnostic> {
    let _span = tracing::info_span!("diagnostics", file = %file.name(db)).entered();
    let text = file.text(db);
    let lines = &file_index(db, file).lines;
    file_diagnostics(db, pack, file)
        .iter()
        .map(|d| Diagnostic {
            range: lsp_types::Range::new(
                lines.position(text, d.start),
                lines.position(text, d.end),
            ),
            severity: Some(if d.error {
                DiagnosticSeverity::ERROR
            } else {
                DiagnosticSeverity::WARNING
            }),
            code: Some(NumberOrString::String(d.code.clone())),
            source: Some("ocf".to_owned()),
            message: d.message.clone(),
            ..Diagnostic::default()
        })
        .collect()
}

/// A checked file: its path, the version checked, its diagnostics.
type Checked = (PathBuf, Option<i32>, Vec<Diagnostic>);

/// A diagnostics job: a handle on the database as it is, and the files to check.
struct Job {
    db: Database,
    files: Vec<(PathBuf, Pack, SourceFile, Option<i32>)>,
}

/// The diagnostics thread: one, long-lived (the build's kept parses are its thread's), checking
/// each job on its own handle. An edit on the server's handle cancels it (salsa unwinds the
/// job at its next query), and the job's files are checked again by the next one: `None`.
fn spawn_checker(
    jobs: crossbeam_channel::Receiver<Job>,
    done: crossbeam_channel::Sender<Option<Vec<Checked>>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for job in jobs {
            let Job { db, files } = job;
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                files
                    .into_iter()
                    .map(|(path, pack, file, version)| {
                        (path, version, lsp_diagnostics(&db, pack, file))
                    })
                    .collect::<Vec<_>>()
            }));
            // The handle goes before the answer: an edit waiting for it goes on.
            drop(db);
            let results = match outcome {
                Ok(results) => Some(results),
                Err(payload) if payload.is::<salsa::Cancelled>() => None,
                Err(_) => {
                    tracing::error!("the diagnostics of a job panicked");
                    Some(Vec::new())
                }
            };
            if done.send(results).is_err() {
                break;
            }
        }
    })
}

/// Applies one change to a text: a range replaced, or the whole text.
fn apply(text: &mut String, change: TextDocumentContentChangeEvent) {
    match change.range {
        None => *text = change.text,
        Some(range) => {
            let lines = crate::text::LineIndex::new(text);
            let start = lines.offset(text, range.start);
            let end = lines.offset(text, range.end).max(start);
            text.replace_range(start..end, &change.text);
        }
    }
}

/// Serves on stdin and stdout.
pub fn run_stdio() -> Result<(), String> {
    serve_streams(std::io::stdin(), std::io::stdout())
}
