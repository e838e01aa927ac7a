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
//! | `GET /api/characters/{id}/history` | `{ id, revision, history: [{ revision, author, what, at }] }`, newest first |
//! | `GET /api/characters/{id}/history/{revision}` | `{ id, revision, current, character }`: the file at a kept revision |
//! | `POST /api/characters/{id}/revert` `{ revision, to }` | makes revision `to`'s file current again, as a new write |
//! | `POST /api/characters/{id}/undo` `{ revision }` | undoes the write that made `revision` (the current one), as a new write |
//! | `DELETE /api/characters/{id}` | removes it, whatever its file's state |
//! | `PUT /api/characters/{id}/ownership` `{ owner, shared }` | who owns it, whether it is shared (gamemaster) |
//! | `GET /api/characters/{id}/events` | server-sent events: `sheet` first, then `changed` per edit, `ask`, `answered` and `withdrawn` between pages (`asks.rs`; the kept asks right after `sheet`) |
//! | `POST /api/login` `{ user, password }` | a browser session (an HttpOnly, SameSite cookie) |
//! | `POST /api/logout` | ends it |
//! | `GET /api/me` | `{ user, role, open }` |
//! | `GET /api/openapi.json` | this API's OpenAPI description, made from [`routes`] (`openapi.rs`) |
//!
//! Every request passes [`crate::guard::check`] first (host, origin, content type, who sends it);
//! each route then asks whether its caller may read or write the character it names.
//! | `GET /api/characters/{id}/texts?lang=TAG` | the packs' texts in a locale, with the display groups and field hints (`texts.rs`) |
//!
//! A write answers `{ id, revision, changes: { values, removed, parts } }`; one made against a
//! revision that is not the stored one is `409 conflict`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Extension, Path, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;

use crate::accounts::Who;
use crate::app::{App, Need, forbidden, read_character};
use crate::error::ApiError;
use crate::openapi::{
    ActionResult, Apply, Closed, ContinueAction, Deleted, Errors, Field, File, Guarded, History,
    Listed, Listing, LoggedIn, LoggedOut, Login, Me, NewCharacter, Options, Owned, Reads, Replace,
    Revert, RevisionFile, SetOwnership, SetValue, Sheet, StartAction, Undo, Writes, Written,
};
use crate::store::Ownership;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The routes, each with its description (`#[utoipa::path]` on its handler): the router and the
/// OpenAPI description (`/api/openapi.json`, [`crate::openapi`]) are both made from this table.
pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::with_openapi(crate::openapi::Root::openapi())
        .routes(routes!(login))
        .routes(routes!(logout))
        .routes(routes!(me))
        .routes(routes!(list, create))
        .routes(routes!(file, replace, delete))
        .routes(routes!(ownership))
        .routes(routes!(sheet))
        .routes(routes!(field))
        .routes(routes!(set_value))
        .routes(routes!(apply))
        .routes(routes!(options))
        .routes(routes!(start_action))
        .routes(routes!(continue_action))
        .routes(routes!(close))
        .routes(routes!(history))
        .routes(routes!(revision_file))
        .routes(routes!(revert))
        .routes(routes!(undo))
        .routes(routes!(events))
        .merge(crate::odds::routes())
        .merge(crate::asks::routes())
        .merge(crate::web::routes())
        .merge(crate::texts::routes())
        .routes(routes!(crate::openapi::served))
}

pub fn router(app: Arc<App>) -> Router {
    let limit = app.limits.max_body_bytes;
    let settings = app.settings();
    let (router, description) = routes().split_for_parts();
    let description = Arc::new(description.to_json().unwrap_or_default());
    let router = router
        .layer(Extension(description))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            crate::guard::check,
        ))
        .with_state(app);
    if settings.cors.is_empty() {
        // CORS stays closed: no `Access-Control-Allow-*` header is ever sent.
        return router;
    }
    let origins: Vec<HeaderValue> = settings
        .cors
        .iter()
        .filter_map(|o| HeaderValue::from_str(o.trim_end_matches('/')).ok())
        .collect();
    router.layer(
        tower_http::cors::CorsLayer::new()
            .allow_origin(origins)
            .allow_methods([Method::GET, Method::POST, Method::PUT, Method::DELETE])
            .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION]),
    )
}

pub(crate) type Answer = Result<axum::Json<Value>, ApiError>;

/// Runs an engine call off the async threads: computing a sheet is CPU work.
pub(crate) async fn blocking(
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
pub(crate) fn body(
    bytes: Result<Bytes, BytesRejection>,
) -> Result<serde_json::Map<String, Value>, ApiError> {
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
    whole_number(
        body,
        "revision",
        "missing-revision",
        "a write names the `revision` it was made against",
    )
}

/// The body's `key`, a whole number: `wrong-type` when it is another value, `missing` (a code and
/// its message) when it is absent, each at `/key`.
fn whole_number(
    body: &serde_json::Map<String, Value>,
    key: &str,
    missing: &str,
    message: &str,
) -> Result<u64, ApiError> {
    let at = format!("/{key}");
    match body.get(key) {
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64().unwrap_or_default()),
        Some(_) => Err(ApiError::bad_request(
            "wrong-type",
            format!("`{key}` is a whole number"),
            &at,
        )),
        None => Err(ApiError::bad_request(missing, message, &at)),
    }
}

/// Every stored character the caller may read, and whether it is open here.
#[utoipa::path(
    get,
    path = "/api/characters",
    tag = "characters",
    responses((status = 200, description = "Every stored character the caller may read", body = Vec<Listed>), Reads),
)]
#[tracing::instrument(name = "serve.list", level = "info", skip_all)]
async fn list(State(app): State<Arc<App>>, Extension(who): Extension<Who>) -> Answer {
    blocking(app, move |app| app.list(&who)).await
}

/// Stores a new character and opens it.
#[utoipa::path(
    post,
    path = "/api/characters",
    tag = "characters",
    request_body = NewCharacter,
    responses((status = 200, description = "Stored and opened: its sheet at revision 1", body = Sheet), Writes),
)]
#[tracing::instrument(name = "serve.create", level = "info", skip_all)]
async fn create(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    if !who.creates() {
        return Err(forbidden("an observer creates no character"));
    }
    let body = body(bytes)?;
    // A player's character is their own; the gamemaster may give it to someone.
    let owner = match body.get("owner") {
        None | Some(Value::Null) => who.name.clone().filter(|_| !who.is_gamemaster()),
        Some(Value::String(owner)) if who.is_gamemaster() => Some(owner.clone()),
        Some(Value::String(_)) => {
            return Err(
                forbidden("only the gamemaster gives a character to another user").at("/owner"),
            );
        }
        Some(_) => {
            return Err(ApiError::bad_request(
                "wrong-type",
                "`owner` is a user's name",
                "/owner",
            ));
        }
    };
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
    blocking(app, move |app| {
        if let Some(owner) = &owner
            && app.store().account(owner)?.is_none()
        {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "unknown-user",
                format!("no user `{owner}`"),
                "/owner",
            ));
        }
        app.create(id, character, owner.as_deref(), who.name.as_deref())
    })
    .await
}

/// The stored file, whether or not it still loads.
#[utoipa::path(
    get,
    path = "/api/characters/{id}",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    responses((status = 200, description = "The file", body = File), Reads),
)]
#[tracing::instrument(name = "serve.file", level = "info", skip_all, fields(character = %id))]
async fn file(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
) -> Answer {
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Read)?;
        app.file(&id)
    })
    .await
}

/// Removes a character and its history, whatever its file's state.
#[utoipa::path(
    delete,
    path = "/api/characters/{id}",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    responses((status = 200, description = "Removed", body = Deleted), Writes),
)]
#[tracing::instrument(name = "serve.delete", level = "info", skip_all, fields(character = %id))]
async fn delete(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
) -> Answer {
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Write)?;
        app.delete(&id)
    })
    .await
}

/// Who owns a character, whether it is shared (gamemaster only).
#[utoipa::path(
    put,
    path = "/api/characters/{id}/ownership",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    request_body = SetOwnership,
    responses((status = 200, description = "Its ownership now", body = Owned), Writes),
)]
#[tracing::instrument(name = "serve.ownership", level = "info", skip_all, fields(character = %id))]
async fn ownership(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = body(bytes)?;
    if !who.is_gamemaster() {
        // Not told apart from a character it can't see.
        return blocking(app, move |app| {
            app.authorize(&who, &id, Need::Read)?;
            Err(forbidden(
                "only the gamemaster gives characters and shares them",
            ))
        })
        .await;
    }
    let owner = match body.get("owner") {
        None | Some(Value::Null) => None,
        Some(Value::String(owner)) => Some(owner.clone()),
        Some(_) => {
            return Err(ApiError::bad_request(
                "wrong-type",
                "`owner` is a user's name or null",
                "/owner",
            ));
        }
    };
    let shared = match body.get("shared") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(shared)) => *shared,
        Some(_) => {
            return Err(ApiError::bad_request(
                "wrong-type",
                "`shared` is true or false",
                "/shared",
            ));
        }
    };
    blocking(app, move |app| {
        app.set_ownership(&id, Ownership { owner, shared })
    })
    .await
}

/// Replaces the file, as one write against `revision`.
#[utoipa::path(
    put,
    path = "/api/characters/{id}",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    request_body = Replace,
    responses((status = 200, description = "Written", body = Written), Writes),
)]
#[tracing::instrument(name = "serve.replace", level = "info", skip_all, fields(character = %id))]
async fn replace(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = body(bytes)?;
    let revision = revision(&body)?;
    let character = body.get("character").ok_or_else(|| {
        ApiError::bad_request("invalid-request", "give the `character`", "/character")
    })?;
    let character = read_character(character, "/character")?;
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Write)?;
        app.replace(&id, revision, character, who.name.as_deref())
    })
    .await
}

/// computeSheet's output for the stored file.
#[utoipa::path(
    get,
    path = "/api/characters/{id}/sheet",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    responses((status = 200, description = "The sheet", body = Sheet), Reads),
)]
#[tracing::instrument(name = "serve.sheet", level = "info", skip_all, fields(character = %id))]
async fn sheet(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
) -> Answer {
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Read)?;
        app.sheet(&id)
    })
    .await
}

/// One field of the sheet (`unknown-field`, 404, when it has none of that ID).
#[utoipa::path(
    get,
    path = "/api/characters/{id}/fields/{field}",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID"), ("field" = String, Path, description = "A field ID, `pack:field` or bare when one pack has it")),
    responses((status = 200, description = "The field", body = Field), Reads),
)]
#[tracing::instrument(name = "serve.field", level = "info", skip_all, fields(character = %id, field = %field))]
async fn field(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path((id, field)): Path<(String, String)>,
) -> Answer {
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Read)?;
        app.field(&id, &field)
    })
    .await
}

/// Sets an input field's saved value (`null` clears it), as one write against `revision`.
#[utoipa::path(
    put,
    path = "/api/characters/{id}/values/{field}",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID"), ("field" = String, Path, description = "An input field's ID")),
    request_body = SetValue,
    responses((status = 200, description = "Written: what changed on the sheet", body = Written), Writes),
)]
#[tracing::instrument(name = "serve.set_value", level = "info", skip_all, fields(character = %id, field = %field))]
async fn set_value(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
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
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Write)?;
        app.set_value(&id, revision, &field, value, who.name.as_deref())
    })
    .await
}

/// applyChanges, atomic, as one write against `revision`.
#[utoipa::path(
    post,
    path = "/api/characters/{id}/changes",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    request_body = Apply,
    responses((status = 200, description = "Written, with applyChanges' output in `applied`", body = Written), Writes),
)]
#[tracing::instrument(name = "serve.apply", level = "info", skip_all, fields(character = %id))]
async fn apply(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let mut body = body(bytes)?;
    let revision = revision(&body)?;
    let seed = seed(&mut body, &who)?;
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
        app.authorize(&who, &id, Need::Write)?;
        app.apply(&id, revision, &changes, strict, seed, who.name.as_deref())
    })
    .await
}

/// The kept writes, newest first: who did what, when.
#[utoipa::path(
    get,
    path = "/api/characters/{id}/history",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    responses((status = 200, description = "The history", body = History), Reads),
)]
#[tracing::instrument(name = "serve.history", level = "info", skip_all, fields(character = %id))]
async fn history(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
) -> Answer {
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Read)?;
        app.history(&id)
    })
    .await
}

/// The file at a kept revision (`unknown-revision`, 404, when it is not kept).
#[utoipa::path(
    get,
    path = "/api/characters/{id}/history/{revision}",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID"), ("revision" = u64, Path, description = "A kept revision")),
    responses((status = 200, description = "The file at that revision", body = RevisionFile), Reads),
)]
#[tracing::instrument(name = "serve.revision", level = "info", skip_all, fields(character = %id))]
async fn revision_file(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path((id, revision)): Path<(String, String)>,
) -> Answer {
    let revision: u64 = revision
        .parse()
        .map_err(|_| ApiError::bad_request("wrong-type", "a revision is a whole number", ""))?;
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Read)?;
        app.revision_file(&id, revision)
    })
    .await
}

/// Makes revision `to`'s file current again, as a new write against `revision`.
#[utoipa::path(
    post,
    path = "/api/characters/{id}/revert",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    request_body = Revert,
    responses((status = 200, description = "Written", body = Written), Writes),
)]
#[tracing::instrument(name = "serve.revert", level = "info", skip_all, fields(character = %id))]
async fn revert(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = body(bytes)?;
    let revision = revision(&body)?;
    let to = whole_number(
        &body,
        "to",
        "invalid-request",
        "give the revision to revert `to`",
    )?;
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Write)?;
        app.revert(&id, revision, to, who.name.as_deref())
    })
    .await
}

/// Undoes the write that made `revision` (the current one), as a new write (`nothing-to-undo`, 409, at revision 1).
#[utoipa::path(
    post,
    path = "/api/characters/{id}/undo",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    request_body = Undo,
    responses((status = 200, description = "Written", body = Written), Writes),
)]
#[tracing::instrument(name = "serve.undo", level = "info", skip_all, fields(character = %id))]
async fn undo(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = body(bytes)?;
    let revision = revision(&body)?;
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Write)?;
        app.undo(&id, revision, who.name.as_deref())
    })
    .await
}

/// listOptions for the choice at `path`; nothing is stored.
#[utoipa::path(
    post,
    path = "/api/characters/{id}/options",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    request_body = Options,
    responses((status = 200, description = "The options", body = Listing), Reads),
)]
#[tracing::instrument(name = "serve.options", level = "info", skip_all, fields(character = %id))]
async fn options(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let body = body(bytes)?;
    let path = body.get("path").cloned().ok_or_else(|| {
        ApiError::bad_request("invalid-request", "give the choice `path`", "/path")
    })?;
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Read)?;
        app.list_options(&id, &path)
    })
    .await
}

/// The body's `seed` (a whole number), if given, taken out of it. The service rolls the dice: only
/// the gamemaster may fix them by a seed (a player choosing the seed would choose the faces).
fn seed(body: &mut serde_json::Map<String, Value>, who: &Who) -> Result<Option<u64>, ApiError> {
    match body.remove("seed") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(_)) if !who.is_gamemaster() => Err(forbidden(
            "the service rolls the dice: only the gamemaster may give a `seed`",
        )
        .at("/seed")),
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

/// startAction on the stored character: finished, or paused with a signed `state`.
#[utoipa::path(
    post,
    path = "/api/characters/{id}/actions",
    tag = "actions",
    params(("id" = String, Path, description = "The character's ID")),
    request_body = StartAction,
    responses((status = 200, description = "The action's result", body = ActionResult), Writes),
)]
#[tracing::instrument(name = "serve.start_action", level = "info", skip_all, fields(character = %id))]
async fn start_action(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let mut body = body(bytes)?;
    let seed = seed(&mut body, &who)?;
    let input: ocf_actions::StartInput = typed(body)?;
    if !who.is_gamemaster() && !app.settings().player_dice {
        if pauses_dice(&input.policy) {
            return Err(forbidden(
                "at this table the service rolls every die: a player's policy does not pause for \
                 dice (`ocf serve --player-dice` lets players roll their own)",
            )
            .at("/policy"));
        }
        if let Some(i) = input.answers.iter().position(|a| a.faces.is_some()) {
            return Err(forbidden(
                "at this table the service rolls every die: a player's answers give no faces",
            )
            .at(&format!("/answers/{i}")));
        }
    }
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Write)?;
        app.start_action(&id, input, seed)
    })
    .await
}

/// Whether a policy can pause a roll for the app's dice.
fn pauses_dice(policy: &ocf_actions::Policy) -> bool {
    use ocf_actions::Then;
    policy.dice == Then::Pause
        || policy.rules.iter().any(|rule| {
            rule.then == Then::Pause && rule.kind.as_deref().is_none_or(|k| k == "roll")
        })
}

/// continueAction: a paused action's `state` continued with `answer` (`invalid-state`, `foreign-state` 422, `stale-state` 409).
#[utoipa::path(
    post,
    path = "/api/characters/{id}/actions/continue",
    tag = "actions",
    params(("id" = String, Path, description = "The character's ID")),
    request_body = ContinueAction,
    responses((status = 200, description = "The action's result", body = ActionResult), Writes),
)]
#[tracing::instrument(name = "serve.continue_action", level = "info", skip_all, fields(character = %id))]
async fn continue_action(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    bytes: Result<Bytes, BytesRejection>,
) -> Answer {
    let mut body = body(bytes)?;
    let seed = seed(&mut body, &who)?;
    let state = body.remove("state").ok_or_else(|| {
        ApiError::bad_request(
            "invalid-request",
            "give the paused action's `state`",
            "/state",
        )
    })?;
    let answer = body.remove("answer").ok_or_else(|| {
        ApiError::bad_request(
            "invalid-request",
            "give the `answer` to its pause",
            "/answer",
        )
    })?;
    if let Some(key) = body.keys().next() {
        return Err(ApiError::bad_request(
            "invalid-request",
            format!("unknown key `{key}`: a continue is `{{ state, answer }}`"),
            &format!("/{key}"),
        ));
    }
    let answer: ocf_actions::Answer = serde_json::from_value(answer)
        .map_err(|e| ApiError::bad_request("invalid-request", e.to_string(), "/answer"))?;
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Write)?;
        app.continue_action(&id, &state, answer, seed)
    })
    .await
}

/// Closes an open character (it stays stored).
#[utoipa::path(
    post,
    path = "/api/characters/{id}/close",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    responses((status = 200, description = "Closed", body = Closed), Reads),
)]
#[tracing::instrument(name = "serve.close", level = "info", skip_all, fields(character = %id))]
async fn close(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
) -> Answer {
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Read)?;
        app.close(&id)
    })
    .await
}

/// Server-sent events: first `sheet` (`{ id, revision, sheet }`), then one `changed` per edit
/// (`{ kind, id, revision, values, removed, parts }`); a subscriber too slow to keep up gets
/// `resync` and should read the sheet again.
#[utoipa::path(
    get,
    path = "/api/characters/{id}/events",
    tag = "characters",
    params(("id" = String, Path, description = "The character's ID")),
    responses((status = 200, description = "Server-sent events: `sheet` first (`{ id, revision, sheet, inputs }`), then `changed` per write (`{ kind, id, revision, values, removed, parts }`), `resync` (`{ missed }`) when the subscriber fell behind, `ask` (`{ kind, id, from, key, run }`: another character's action asks this character's player to make a roll, `POST …/asks`; each kept ask is told again to every page that subscribes, after `sheet`), `answered` (`{ kind, id, from, key, outcome }`: the asked player's outcome, `POST …/asks/answer`; told again to every page that subscribes until the asker withdraws it) and `withdrawn` (`{ kind, id, from, key }`: the asker took its ask back)", content_type = "text/event-stream", body = String), Reads),
)]
#[tracing::instrument(name = "serve.events", level = "info", skip_all, fields(character = %id))]
async fn events(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
) -> Response {
    let subscribed = tokio::task::spawn_blocking(move || {
        app.authorize(&who, &id, Need::Read)?;
        let (first, receiver) = app.subscribe(&id)?;
        // The asks kept for this character, read after subscribing: one made in between is
        // told twice (a page knows an ask by its key), none is missed.
        Ok::<_, ApiError>((first, receiver, app.asks.pending(&id)))
    })
    .await;
    let (first, receiver, pending) = match subscribed {
        Ok(Ok(subscribed)) => subscribed,
        Ok(Err(error)) => return error.into_response(),
        Err(error) => return ApiError::internal(error.to_string()).into_response(),
    };
    // An ask between pages (`asks.rs`) goes by its own kind; every other is a change.
    let named = |event: &Value| {
        match event["kind"].as_str() {
            Some(kind @ ("ask" | "answered" | "withdrawn")) => Event::default().event(kind),
            _ => Event::default().event("changed"),
        }
        .data(event.to_string())
    };
    let first = tokio_stream::iter(
        std::iter::once(Event::default().event("sheet").data(first.to_string()))
            .chain(pending.iter().map(named))
            .map(Ok::<Event, Infallible>)
            .collect::<Vec<_>>(),
    );
    let rest = BroadcastStream::new(receiver).map(move |event| {
        Ok(match event {
            Ok(event) => named(&event),
            Err(BroadcastStreamRecvError::Lagged(missed)) => Event::default()
                .event("resync")
                .data(json!({ "missed": missed }).to_string()),
        })
    });
    Sse::new(first.chain(rest))
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        "this route does not take that method; see docs/service.md",
        "",
    )
}

/// `POST /api/login` `{ user, password }`: a session cookie (HttpOnly, SameSite=Strict, Secure
/// off loopback) and `{ user, role }`; a wrong name or password is `invalid-credentials`.
#[utoipa::path(
    post,
    path = "/api/login",
    tag = "accounts",
    request_body = Login,
    responses((status = 200, description = "Logged in: the session cookie is set (HttpOnly, SameSite=Strict)", body = LoggedIn), (status = 401, description = "`invalid-credentials`: no such user, or not that password", body = Errors), Guarded),
)]
#[tracing::instrument(name = "serve.login", level = "info", skip_all)]
async fn login(State(app): State<Arc<App>>, bytes: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let body = body(bytes)?;
        let text = |key: &str| -> Result<String, ApiError> {
            body.get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| {
                    ApiError::bad_request(
                        "invalid-request",
                        format!("give the `{key}`"),
                        &format!("/{key}"),
                    )
                })
        };
        let (user, password) = (text("user")?, text("password")?);
        let settings = app.settings();
        if settings.open {
            return Ok((
                None,
                json!({ "user": null, "role": "gamemaster", "open": true }),
            ));
        }
        let checking = app.clone();
        let _turn = checking
            .logins
            .acquire()
            .await
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let made = tokio::task::spawn_blocking(move || {
            let who = crate::accounts::log_in(app.store(), &user, &password)?;
            let Some(who) = who else { return Ok(None) };
            let name = who.name.clone().unwrap_or_default();
            let secret = crate::accounts::start_session(app.store(), &name)?;
            Ok::<_, crate::store::StoreError>(Some((who, secret)))
        })
        .await
        .map_err(|e| ApiError::internal(e.to_string()))??;
        let Some((who, secret)) = made else {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "invalid-credentials",
                "no such user, or not that password",
                "",
            ));
        };
        let cookie = format!(
            "{}={secret}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
            crate::guard::COOKIE,
            crate::accounts::SESSION_SECONDS,
            if settings.secure_cookie {
                "; Secure"
            } else {
                ""
            }
        );
        Ok((
            Some(cookie),
            json!({ "user": who.name, "role": who.role.name(), "open": false }),
        ))
    }
    .await;
    match answer {
        Ok((cookie, body)) => {
            let mut response = axum::Json(body).into_response();
            if let Some(cookie) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
                response.headers_mut().insert(header::SET_COOKIE, cookie);
            }
            response
        }
        Err(error) => error.into_response(),
    }
}

/// `POST /api/logout`: the session ends and its cookie is cleared.
#[utoipa::path(
    post,
    path = "/api/logout",
    tag = "accounts",
    responses((status = 200, description = "Logged out: the cookie is cleared", body = LoggedOut), Guarded),
)]
async fn logout(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Some(secret) = crate::guard::session_cookie(&headers) {
        let digest = crate::accounts::digest(&secret);
        let _ =
            tokio::task::spawn_blocking(move || app.store().remove_credential("session", &digest))
                .await;
    }
    let mut response = axum::Json(json!({ "loggedOut": true })).into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&format!(
            "{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0",
            crate::guard::COOKIE
        ))
        .expect("a plain header"),
    );
    response
}

/// `GET /api/me`: who the request logs in as.
#[utoipa::path(
    get,
    path = "/api/me",
    tag = "accounts",
    responses((status = 200, description = "Who the request logs in as", body = Me), Reads),
)]
async fn me(State(app): State<Arc<App>>, Extension(who): Extension<Who>) -> Answer {
    Ok(axum::Json(json!({
        "user": who.name, "role": who.role.name(), "open": app.settings().open,
        "playerDice": app.settings().player_dice
    })))
}

async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not-found",
        "no such route; see /api/characters",
        "",
    )
}
