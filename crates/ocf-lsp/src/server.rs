//! The server loop: the initialize handshake, then one message at a time. Edits update the
//! files' inputs and publish the diagnostics of the open files they may change; each request is
//! answered in a `tracing` span, and a request that fails (a bad parameter, a panic in a
//! feature) is answered with an error while the server goes on.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Notification as _, PublishDiagnostics,
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
use serde_json::Value;

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

/// Serves one connection until the client's `exit` (or the connection closes).
pub fn serve(connection: &Connection) -> Result<(), String> {
    let caps = serde_json::to_value(capabilities()).map_err(|e| e.to_string())?;
    let params = connection.initialize(caps).map_err(|e| e.to_string())?;
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
    for message in &connection.receiver {
        match message {
            Message::Request(request) => {
                let response = server.request(request);
                connection
                    .sender
                    .send(Message::Response(response))
                    .map_err(|e| e.to_string())?;
            }
            Message::Notification(notification) => {
                if notification.method == "exit" {
                    return Ok(());
                }
                for out in server.notification(notification) {
                    connection
                        .sender
                        .send(Message::Notification(out))
                        .map_err(|e| e.to_string())?;
                }
            }
            Message::Response(_) => {}
        }
    }
    Ok(())
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

    /// Handles a notification; gives the diagnostics to publish.
    pub fn notification(&mut self, notification: Notification) -> Vec<Notification> {
        let span = tracing::info_span!("notification", method = %notification.method);
        let _entered = span.enter();
        let outcome = catch_unwind(AssertUnwindSafe(|| self.notify(notification)));
        match outcome {
            Ok(changed) => changed
                .into_iter()
                .flatten()
                .flat_map(|pack| self.publish(pack))
                .collect(),
            Err(_) => {
                tracing::error!("a notification panicked");
                Vec::new()
            }
        }
    }

    /// Applies a notification; gives the packs whose files changed.
    fn notify(&mut self, notification: Notification) -> Option<Vec<Pack>> {
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let p: lsp_types::DidOpenTextDocumentParams =
                    serde_json::from_value(notification.params).ok()?;
                let path = path_of(&p.text_document.uri)?;
                self.world.open.insert(path.clone());
                let (pack, _) = self.world.set_text(&path, p.text_document.text)?;
                Some(vec![pack])
            }
            DidChangeTextDocument::METHOD => {
                let p: lsp_types::DidChangeTextDocumentParams =
                    serde_json::from_value(notification.params).ok()?;
                let path = path_of(&p.text_document.uri)?;
                let (_, file) = self.world.file(&path)?;
                let mut text = file.text(&self.world.db).clone();
                for change in p.content_changes {
                    apply(&mut text, change);
                }
                let (pack, _) = self.world.set_text(&path, text)?;
                Some(vec![pack])
            }
            DidCloseTextDocument::METHOD => {
                let p: lsp_types::DidCloseTextDocumentParams =
                    serde_json::from_value(notification.params).ok()?;
                let path = path_of(&p.text_document.uri)?;
                self.world.open.remove(&path);
                self.published.remove(&path);
                // The file is what is on disk again.
                let text = std::fs::read_to_string(&path).unwrap_or_default();
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

    /// The diagnostics of the open files of the pack and of the packs depending on it, for each
    /// file whose diagnostics changed since last published.
    pub fn publish(&mut self, pack: Pack) -> Vec<Notification> {
        let mut out = Vec::new();
        let open: Vec<PathBuf> = self.world.open.iter().cloned().collect();
        let affected = self.world.dependents(pack);
        for path in open {
            let Some((file_pack, file)) = self.world.file(&path) else {
                continue;
            };
            if !affected.contains(&file_pack) {
                continue;
            }
            let diagnostics = self.diagnostics(file_pack, file);
            if self.published.get(&path) == Some(&diagnostics) {
                continue;
            }
            self.published.insert(path.clone(), diagnostics.clone());
            let Ok(uri) = Url::from_file_path(&path) else {
                continue;
            };
            let params = PublishDiagnosticsParams {
                uri,
                diagnostics,
                version: None,
            };
            out.push(Notification::new(
                PublishDiagnostics::METHOD.to_owned(),
                params,
            ));
        }
        out
    }

    pub fn diagnostics(&self, pack: Pack, file: SourceFile) -> Vec<Diagnostic> {
        let _span = tracing::info_span!("diagnostics", file = %file.name(&self.world.db)).entered();
        let db = &self.world.db;
        file_diagnostics(db, pack, file)
            .iter()
            .map(|d| Diagnostic {
                range: crate::ide::range(
                    &self.world,
                    file,
                    crate::yaml::Span {
                        start: d.start,
                        end: d.end,
                    },
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
    let (connection, threads) = Connection::stdio();
    serve(&connection)?;
    drop(connection);
    threads.join().map_err(|e| e.to_string())
}
