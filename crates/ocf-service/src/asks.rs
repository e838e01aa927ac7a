//! A roll one character's action asks of another's player (a target's saving throw that pauses
//! for a choice or for the player's own dice), carried between their open pages by the service's
//! pushes. Nothing is stored: a page open on the character is the only one told.
//!
//! | method and path | what it does |
//! | --- | --- |
//! | `POST /api/characters/{id}/asks` `{ from, key, run }` | asks `id`'s player (the page open on `id`) to make the handoff run `run` (`{ action, params?, participants? }`, as a handoff pause gives it) for `from`'s action: pushed to `id`'s subscribers as the event `ask` `{ kind, id, from, key, run }`. The caller may write `from` and read `id` |
//! | `POST /api/characters/{id}/asks/answer` `{ to, key, outcome }` | `id`'s player's outcome of that roll, pushed to `to`'s subscribers as the event `answered` `{ kind, id: to, from: id, key, outcome }`. The caller may write `id` and read `to` |
//!
//! Either is `409 not-watched` when no page is open on the character told (`/id`, `/to`).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use crate::accounts::Who;
use crate::api::{Answer, blocking};
use crate::app::{App, Need};
use crate::error::ApiError;
use crate::openapi::{Ask, AskAnswer, Asked, Errors, Reads, Told};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(ask))
        .routes(routes!(answer))
}

/// The body's object (read as every route reads one: [`crate::api::body`]) and its keys: each of
/// `keys` is required, and no other is taken.
fn fields(
    body: Result<Bytes, BytesRejection>,
    keys: &[&str],
) -> Result<Map<String, Value>, ApiError> {
    let map = crate::api::body(body)?;
    if let Some(key) = map.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(ApiError::bad_request(
            "invalid-request",
            format!("unknown key `{key}`: this route takes {}", keys.join(", ")),
            &format!("/{key}"),
        ));
    }
    for key in keys {
        if !map.contains_key(*key) {
            return Err(ApiError::bad_request(
                "invalid-request",
                format!("give `{key}`"),
                &format!("/{key}"),
            ));
        }
    }
    for key in ["from", "to", "key"] {
        if map.get(key).is_some_and(|v| !v.is_string()) {
            return Err(ApiError::bad_request(
                "wrong-type",
                format!("`{key}` is a string"),
                &format!("/{key}"),
            ));
        }
    }
    Ok(map)
}

/// Pushes `event` to the page open on `id`, or `not-watched` at `path`.
fn tell(app: &App, id: &str, event: Value, path: &str) -> Result<(), ApiError> {
    if app.tell(id, event) {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::CONFLICT,
            "not-watched",
            format!("no page is open on `{id}`: open its sheet, then ask again"),
            path,
        ))
    }
}

/// Asks the player of the page open on `id` to make a roll of `from`'s action (a handoff that
/// paused): pushed to `id`'s subscribers as the event `ask`; nothing is stored.
#[utoipa::path(
    post,
    path = "/api/characters/{id}/asks",
    tag = "actions",
    params(("id" = String, Path, description = "The asked character's ID")),
    request_body = Ask,
    responses(
        (status = 200, description = "Asked: the page open on `id` was told", body = Asked),
        (status = 409, description = "`not-watched`: no page is open on the character (`/id`)", body = Errors),
        Reads,
    ),
)]
#[tracing::instrument(name = "serve.ask", level = "info", skip_all, fields(character = %id))]
async fn ask(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let map = fields(body, &["from", "key", "run"])?;
    let from = map["from"].as_str().unwrap_or_default().to_owned();
    if !map["run"].is_object() {
        return Err(ApiError::bad_request(
            "wrong-type",
            "`run` is the handoff's run, an object",
            "/run",
        ));
    }
    blocking(app, move |app| {
        app.authorize(&who, &from, Need::Write)?;
        app.authorize(&who, &id, Need::Read)?;
        let event =
            json!({ "kind": "ask", "id": id, "from": from, "key": map["key"], "run": map["run"] });
        tell(app, &id, event, "/id")?;
        Ok(json!({ "id": id, "asked": true }))
    })
    .await
}

/// The asked player's outcome of the roll, pushed to `to`'s subscribers as the event `answered`.
#[utoipa::path(
    post,
    path = "/api/characters/{id}/asks/answer",
    tag = "actions",
    params(("id" = String, Path, description = "The answering character's ID")),
    request_body = AskAnswer,
    responses(
        (status = 200, description = "Answered: the page open on `to` was told", body = Told),
        (status = 409, description = "`not-watched`: no page is open on `to` (`/to`)", body = Errors),
        Reads,
    ),
)]
#[tracing::instrument(name = "serve.ask_answer", level = "info", skip_all, fields(character = %id))]
async fn answer(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let map = fields(body, &["to", "key", "outcome"])?;
    let to = map["to"].as_str().unwrap_or_default().to_owned();
    if !map["outcome"].is_object() {
        return Err(ApiError::bad_request(
            "wrong-type",
            "`outcome` is the roll's outcome, an object",
            "/outcome",
        ));
    }
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Write)?;
        app.authorize(&who, &to, Need::Read)?;
        let event = json!({ "kind": "answered", "id": to, "from": id, "key": map["key"], "outcome": map["outcome"] });
        tell(app, &to, event, "/to")?;
        Ok(json!({ "id": id, "answered": true }))
    })
    .await
}
