//! The HTTP interface: JSON in, JSON out, every error `{ "errors": [{ code, message, path }] }`.
//!
//! | method and path | what it does |
//! | --- | --- |
//! | `GET /api/characters` | every stored character: `[{ id, revision, open }]` |
//! | `POST /api/characters` `{ id?, character }` | stores a new character (an object, or its file's text) and opens it |
//! | `GET /api/characters/{id}` | `{ id, revision, character }`: the file |
//! | `PUT /api/characters/{id}` `{ revision, character }` | replaces the file |
//! | `GET /api/characters/{id}/sheet` | `{ id, revision, sheet }`: computeSheet's output |
//! | `GET /api/characters/{id}/fields/{field}` | `{ id, revision, field, value }` |
//! | `PUT /api/characters/{id}/values/{field}` `{ revision, value }` | sets an input value (`null` clears it) |
//! | `POST /api/characters/{id}/changes` `{ revision, changes, strict?, seed? }` | applyChanges, atomic, as one write |
//! | `POST /api/characters/{id}/options` `{ path }` | listOptions for the choice at `path` |
//! | `POST /api/characters/{id}/actions` `{ action, params?, situational?, policy?, participants?, answers?, seed? }` | startAction |
//! | `POST /api/characters/{id}/actions/continue` `{ state, answer, seed? }` | continueAction |
//! | `POST /api/characters/{id}/close` | closes it (it stays stored) |
//! | `GET /api/characters/{id}/events` | server-sent events: `sheet` first, then `changed` per edit |
//!
//! A write answers `{ id, revision, changes: { values, removed, parts } }`; one made against a
//! revision that is not the stored one is `409 conflict`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde_json::{Value, json};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;

use crate::app::{App, read_character};
use crate::error::ApiError;

pub fn router(app: Arc<App>) -> Router {
    let limit = app.limits.max_body_bytes;
    Router::new()
        .route("/api/characters", get(list).post(create))
        .route("/api/characters/{id}", get(file).put(replace))
        .route("/api/characters/{id}/sheet", get(sheet))
        .route("/api/characters/{id}/fields/{field}", get(field))
        .route("/api/characters/{id}/values/{field}", put(set_value))
        .route("/api/characters/{id}/changes", post(apply))
        .route("/api/characters/{id}/options", post(options))
        .route("/api/characters/{id}/actions", post(start_action))
        .route(
            "/api/characters/{id}/actions/continue",
            post(continue_action),
        )
        .route("/api/characters/{id}/close", post(close))
        .route("/api/characters/{id}/events", get(events))
        .merge(crate::odds::routes())
        .merge(crate::web::routes())
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(app)
}

type Answer = Result<axum::Json<Value>, ApiError>;

/// Runs an engine call off the async threads: computing a sheet is CPU work.
async fn blocking(
    app: Arc<App>,
    call: impl FnOnce(&App) -> Result<Value, ApiError> + Send + 'static,
) -> Answer {
    let span = tracing::Span::current();
    match tokio::task::spawn_blocking(move || span.in_scope(|| call(&app))).await {
        Ok(result) => result.map(axum::Json),
        Err(error) => Err(ApiError::internal(format!("the request failed: {error}"))),
    }
}

/// The request's JSON object, or `invalid-request` (`payload-too-large` past the body limit).
fn body(bytes: Result<Bytes, BytesRejection>) -> Result<serde_json::Map<String, Value>, ApiError> {
    let bytes = bytes.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload-too-large",
                "the request body is larger than the service takes",
                "",
            )
        } else {
            ApiError::bad_request("invalid-request", rejection.body_text(), "")
        }
    })?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::bad_request(
            "invalid-request",
            "the body is a JSON object",
            "",
        )),
        Err(error) => Err(ApiError::bad_request(
            "invalid-request",
            format!("the body is not JSON: {error}"),
            "",
        )),
    }
}

/// The body's `revision`: a write names the revision it was made against.
fn revision(body: &serde_json::Map<String, Value>) -> Result<u64, ApiError> {
    match body.get("revision") {
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64().unwrap_or_default()),
        Some(_) => Err(ApiError::bad_request(
            "wrong-type",
            "`revision` is a whole number",
            "/revision",
        )),
        None => Err(ApiError::bad_request(
            "missing-revision",
            "a write names the `revision` it was made against",
            "/revision",
        )),
    }
}

#[tracing::instrument(name = "serve.list", level = "info", skip_all)]
async fn list(State(app): State<Arc<App>>) -> Answer {
    blocking(app, |app| app.list()).await
}

#[tracing::instrument(name = "serve.create", level = "info", skip_all)]
async fn create(State(app): State<Arc<App>>, bytes: Result<Bytes, BytesRejection>) -> Answer {
    let body = body(bytes)?;
    let id = match body.get("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.clone()),
        Some(_) => {
            return Err(ApiError::bad_request(
                "wrong-type",
                "`id` is a string",
                "/id",
            ));
        }
    };
    let character = body.get("character").ok_or_else(|| {
        ApiError::bad_request("invalid-request", "give the `character`", "/character")
    })?;
    let character = read_character(character, "/character")?;
    blocking(app, move |app| app.create(id, character)).await
}

#[tracing::instrument(name = "serve.file", level = "info", skip_all, fields(character = %id))]
async fn file(State(app): State<Arc<App>>, Path(id): Path<String>) -> Answer {
    blocking(app, move |app| app.file(&id)).await
}

#[tracing::instrument(name = "serve.replace", level = "info", skip_all, fields(character = %id))]
async fn replace(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = body(bytes)?;
    let revision = revision(&body)?;
    let character = body.get("character").ok_or_else(|| {
        ApiError::bad_request("invalid-request", "give the `character`", "/character")
    })?;
    let character = read_character(character, "/character")?;
    blocking(app, move |app| app.replace(&id, revision, character)).await
}

#[tracing::instrument(name = "serve.sheet", level = "info", skip_all, fields(character = %id))]
async fn sheet(State(app): State<Arc<App>>, Path(id): Path<String>) -> Answer {
    blocking(app, move |app| app.sheet(&id)).await
}

#[tracing::instrument(name = "serve.field", level = "info", skip_all, fields(character = %id, field = %field))]
async fn field(State(app): State<Arc<App>>, Path((id, field)): Path<(String, String)>) -> Answer {
    blocking(app, move |app| app.field(&id, &field)).await
}

#[tracing::instrument(name = "serve.set_value", level = "info", skip_all, fields(character = %id, field = %field))]
async fn set_value(
    State(app): State<Arc<App>>,
    Path((id, field)): Path<(String, String)>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = body(bytes)?;
    let revision = revision(&body)?;
    let value = match body.get("value") {
        None => {
            return Err(ApiError::bad_request(
                "invalid-request",
                "give the `value` (`null` clears it)",
                "/value",
            ));
        }
        Some(Value::Null) => None,
        Some(value) => Some(value.clone()),
    };
    blocking(app, move |app| app.set_value(&id, revision, &field, value)).await
}

#[tracing::instrument(name = "serve.apply", level = "info", skip_all, fields(character = %id))]
async fn apply(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let mut body = body(bytes)?;
    let revision = revision(&body)?;
    let seed = seed(&mut body)?;
    let strict = match body.get("strict") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(strict)) => *strict,
        Some(_) => {
            return Err(ApiError::bad_request(
                "wrong-type",
                "`strict` is true or false",
                "/strict",
            ));
        }
    };
    let changes = body.remove("changes").ok_or_else(|| {
        ApiError::bad_request("invalid-request", "give the `changes`", "/changes")
    })?;
    blocking(app, move |app| {
        app.apply(&id, revision, &changes, strict, seed)
    })
    .await
}

#[tracing::instrument(name = "serve.options", level = "info", skip_all, fields(character = %id))]
async fn options(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = body(bytes)?;
    let path = body.get("path").cloned().ok_or_else(|| {
        ApiError::bad_request("invalid-request", "give the choice `path`", "/path")
    })?;
    blocking(app, move |app| app.list_options(&id, &path)).await
}

/// The body's `seed` (a whole number), if given, taken out of it.
fn seed(body: &mut serde_json::Map<String, Value>) -> Result<Option<u64>, ApiError> {
    match body.remove("seed") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        Some(_) => Err(ApiError::bad_request(
            "wrong-type",
            "`seed` is a whole number",
            "/seed",
        )),
    }
}

/// Reads the body as `T`, a misplaced key an `invalid-request` at its path.
fn typed<T: serde::de::DeserializeOwned>(
    body: serde_json::Map<String, Value>,
) -> Result<T, ApiError> {
    serde_json::from_value(Value::Object(body))
        .map_err(|e| ApiError::bad_request("invalid-request", e.to_string(), ""))
}

#[tracing::instrument(name = "serve.start_action", level = "info", skip_all, fields(character = %id))]
async fn start_action(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    action_call(app, id, bytes, App::start_action).await
}

#[tracing::instrument(name = "serve.continue_action", level = "info", skip_all, fields(character = %id))]
async fn continue_action(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    action_call(app, id, bytes, App::continue_action).await
}

/// An action call: the body read as its input `T` (its `seed` taken out first), then `call`.
async fn action_call<T: serde::de::DeserializeOwned + Send + 'static>(
    app: Arc<App>,
    id: String,
    bytes: Result<Bytes, BytesRejection>,
    call: fn(&App, &str, T, Option<u64>) -> Result<Value, ApiError>,
) -> Answer {
    let mut body = body(bytes)?;
    let seed = seed(&mut body)?;
    let input: T = typed(body)?;
    blocking(app, move |app| call(app, &id, input, seed)).await
}

#[tracing::instrument(name = "serve.close", level = "info", skip_all, fields(character = %id))]
async fn close(State(app): State<Arc<App>>, Path(id): Path<String>) -> Answer {
    blocking(app, move |app| app.close(&id)).await
}

/// Server-sent events: first `sheet` (`{ id, revision, sheet }`), then one `changed` per edit
/// (`{ kind, id, revision, values, removed, parts }`); a subscriber too slow to keep up gets
/// `resync` and should read the sheet again.
#[tracing::instrument(name = "serve.events", level = "info", skip_all, fields(character = %id))]
async fn events(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    let subscribed = tokio::task::spawn_blocking(move || app.subscribe(&id)).await;
    let (first, receiver) = match subscribed {
        Ok(Ok(subscribed)) => subscribed,
        Ok(Err(error)) => return error.into_response(),
        Err(error) => return ApiError::internal(error.to_string()).into_response(),
    };
    let first = tokio_stream::once(Ok::<Event, Infallible>(
        Event::default().event("sheet").data(first.to_string()),
    ));
    let rest = BroadcastStream::new(receiver).map(|event| {
        Ok(match event {
            Ok(event) => Event::default().event("changed").data(event.to_string()),
            Err(BroadcastStreamRecvError::Lagged(missed)) => Event::default()
                .event("resync")
                .data(json!({ "missed": missed }).to_string()),
        })
    });
    Sse::new(first.chain(rest))
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not-found",
        "no such route; see /api/characters",
        "",
    )
}
