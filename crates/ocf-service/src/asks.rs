//! A roll one character's action asks of another's player (a target's saving throw that pauses
//! for a choice or for the player's own dice), kept by the service until it is answered or the
//! asker withdraws it, and carried between the two characters' pages by the service's pushes.
//!
//! | method and path | what it does |
//! | --- | --- |
//! | `POST /api/characters/{id}/asks` `{ from, key, run }` | asks `id`'s player to make the handoff run `run` (`{ action, params?, participants?, policy? }`, as a handoff pause gives it) for `from`'s action: kept on `id`, and pushed to `id`'s subscribers as the event `ask` `{ kind, id, from, key, run }`, now if a page is open on `id`, else when one opens (each page that subscribes is told every ask kept on its character). The caller may write `from` and read `id` |
//! | `POST /api/characters/{id}/asks/answer` `{ to, key, outcome }` | `id`'s player's outcome of that roll, once: kept with the ask and pushed to `to`'s subscribers as the event `answered` `{ kind, id: to, from: id, key, outcome }` (again to each page that subscribes to `to` until the asker withdraws it). The caller may write `id` and read `to` |
//! | `POST /api/characters/{id}/asks/withdraw` `{ from, key }` | the asker drops its ask: an unanswered one is taken back (`id`'s subscribers get the event `withdrawn` `{ kind, id, from, key }`), an answered one is collected. The caller may write `from` and read `id` |
//!
//! Asks are kept in the instance's memory (see docs/service.md, "Asks between pages"): at most
//! [`MAX_KEPT`] on a character (an answered one is dropped first to make room; past that
//! `too-many-asks`), each `run` and `outcome` at most [`MAX_BYTES`] of JSON. Codes:
//! `duplicate-ask` (409, `/key`: `from` asked `id` under that key already), `too-many-asks` (409,
//! `/id`), `unknown-ask` (404, `/key`: none kept under that key, never made or withdrawn),
//! `already-answered` (409, `/key`), `payload-too-large` (413, `/run`, `/outcome`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use crate::accounts::Who;
use crate::api::{Answer, blocking};
use crate::app::{App, Need};
use crate::error::ApiError;
use crate::openapi::{Ask, AskAnswer, Asked, Errors, Reads, Told, Withdraw, Withdrawn};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Asks kept on one character at most.
pub const MAX_KEPT: usize = 16;
/// The largest `run` or `outcome`, in bytes of JSON.
pub const MAX_BYTES: usize = 16 * 1024;
/// The longest key.
pub const MAX_KEY: usize = 200;

/// The asks this instance keeps, by the asked character's ID.
#[derive(Default)]
pub struct Kept {
    asks: Mutex<HashMap<String, Vec<KeptAsk>>>,
}

struct KeptAsk {
    from: String,
    key: String,
    run: Value,
    /// The answer, once given: kept until the asker collects it (withdraws the ask).
    outcome: Option<Value>,
}

fn unknown(id: &str, from: &str, key: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "unknown-ask",
        format!("`{from}` has no ask of `{id}` under the key `{key}`: it was answered and collected, withdrawn, or never made"),
        "/key",
    )
    .with("key", key)
}

impl Kept {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<KeptAsk>>> {
        // Nothing panics while the map is held: asks are only looked up, added and removed.
        self.asks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `from`'s ask of `id`: `duplicate-ask` when one is kept under `key` already,
    /// `too-many-asks` when `id` holds [`MAX_KEPT`] unanswered ones (an answered one is dropped,
    /// oldest first, to make room).
    fn ask(&self, id: &str, from: &str, key: &str, run: &Value) -> Result<(), ApiError> {
        let mut asks = self.lock();
        let kept = asks.entry(id.to_owned()).or_default();
        if kept.iter().any(|a| a.from == from && a.key == key) {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "duplicate-ask",
                format!("`{from}` asked `{id}` under the key `{key}` already"),
                "/key",
            )
            .with("key", key));
        }
        if kept.len() >= MAX_KEPT {
            match kept.iter().position(|a| a.outcome.is_some()) {
                Some(answered) => {
                    kept.remove(answered);
                }
                None => {
                    return Err(ApiError::new(
                        StatusCode::CONFLICT,
                        "too-many-asks",
                        format!(
                            "`{id}` has {MAX_KEPT} rolls asked of it and not answered: wait for its player, or withdraw one"
                        ),
                        "/id",
                    )
                    .with("limit", MAX_KEPT));
                }
            }
        }
        kept.push(KeptAsk {
            from: from.to_owned(),
            key: key.to_owned(),
            run: run.clone(),
            outcome: None,
        });
        Ok(())
    }

    /// Keeps `id`'s answer to `to`'s ask: `unknown-ask`, `already-answered`.
    fn answer(&self, id: &str, to: &str, key: &str, outcome: &Value) -> Result<(), ApiError> {
        let mut asks = self.lock();
        let ask = asks
            .get_mut(id)
            .and_then(|kept| kept.iter_mut().find(|a| a.from == to && a.key == key))
            .ok_or_else(|| unknown(id, to, key))?;
        if ask.outcome.is_some() {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "already-answered",
                format!("`{to}`'s ask under the key `{key}` is answered already"),
                "/key",
            )
            .with("key", key));
        }
        ask.outcome = Some(outcome.clone());
        Ok(())
    }

    /// Drops `from`'s ask of `id`: whether it was still unanswered; `unknown-ask`.
    fn withdraw(&self, id: &str, from: &str, key: &str) -> Result<bool, ApiError> {
        let mut asks = self.lock();
        let kept = asks.get_mut(id).ok_or_else(|| unknown(id, from, key))?;
        let at = kept
            .iter()
            .position(|a| a.from == from && a.key == key)
            .ok_or_else(|| unknown(id, from, key))?;
        let ask = kept.remove(at);
        if kept.is_empty() {
            asks.remove(id);
        }
        Ok(ask.outcome.is_none())
    }

    /// What a page subscribing to `id` is told first: each unanswered ask kept on `id` (`ask`),
    /// each answer to an ask of `id`'s not yet collected (`answered`), oldest first.
    pub fn pending(&self, id: &str) -> Vec<Value> {
        let asks = self.lock();
        let mut events: Vec<Value> = asks
            .get(id)
            .into_iter()
            .flatten()
            .filter(|a| a.outcome.is_none())
            .map(|a| ask_event(id, &a.from, &a.key, &a.run))
            .collect();
        for (asked, kept) in asks.iter() {
            for a in kept.iter().filter(|a| a.from == id) {
                if let Some(outcome) = &a.outcome {
                    events.push(answered_event(id, asked, &a.key, outcome));
                }
            }
        }
        events
    }

    /// Drops every ask of or to `id` (a deleted character).
    pub fn forget(&self, id: &str) {
        let mut asks = self.lock();
        asks.remove(id);
        asks.retain(|_, kept| {
            kept.retain(|a| a.from != id);
            !kept.is_empty()
        });
    }
}

/// The event `ask`, told to the asked character `id`'s pages.
fn ask_event(id: &str, from: &str, key: &str, run: &Value) -> Value {
    json!({ "kind": "ask", "id": id, "from": from, "key": key, "run": run })
}

/// The event `answered`, told to the asker `to`'s pages: `asked`'s outcome.
fn answered_event(to: &str, asked: &str, key: &str, outcome: &Value) -> Value {
    json!({ "kind": "answered", "id": to, "from": asked, "key": key, "outcome": outcome })
}

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new()
        .routes(routes!(ask))
        .routes(routes!(answer))
        .routes(routes!(withdraw))
}

/// The body's object (read as every route reads one: [`crate::api::body`]) and its keys: each of
/// `keys` is required, and no other is taken; `from`, `to` and `key` are strings, a key 1 to
/// [`MAX_KEY`] characters; `object`, if given, is an object of at most [`MAX_BYTES`] of JSON.
fn fields(
    body: Result<Bytes, BytesRejection>,
    keys: &[&str],
    object: Option<(&str, &str)>,
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
    let key = map["key"].as_str().unwrap_or_default();
    if key.is_empty() || key.chars().count() > MAX_KEY {
        return Err(ApiError::bad_request(
            "invalid-request",
            format!("a key is 1 to {MAX_KEY} characters"),
            "/key",
        ));
    }
    if let Some((name, what)) = object {
        if !map[name].is_object() {
            return Err(ApiError::bad_request(
                "wrong-type",
                format!("`{name}` is {what}, an object"),
                &format!("/{name}"),
            ));
        }
        if map[name].to_string().len() > MAX_BYTES {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload-too-large",
                format!("`{name}` is larger than an ask keeps ({MAX_BYTES} bytes of JSON)"),
                &format!("/{name}"),
            )
            .with("limit", MAX_BYTES));
        }
    }
    Ok(map)
}

fn text(map: &Map<String, Value>, key: &str) -> String {
    map[key].as_str().unwrap_or_default().to_owned()
}

/// Asks the player of `id` to make a roll of `from`'s action (a handoff that paused): kept until
/// answered or withdrawn, and pushed to `id`'s subscribers (now, and to each page that opens on
/// it later) as the event `ask`.
#[utoipa::path(
    post,
    path = "/api/characters/{id}/asks",
    tag = "actions",
    params(("id" = String, Path, description = "The asked character's ID")),
    request_body = Ask,
    responses(
        (status = 200, description = "Asked: kept on `id`, its pages told (`watched`: whether one is open now)", body = Asked),
        (status = 409, description = "`duplicate-ask`: `from` asked `id` under that key already (`/key`); `too-many-asks`: `id` holds as many unanswered asks as it keeps (`/id`, `data.limit`)", body = Errors),
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
    let map = fields(
        body,
        &["from", "key", "run"],
        Some(("run", "the handoff's run")),
    )?;
    let (from, key) = (text(&map, "from"), text(&map, "key"));
    blocking(app, move |app| {
        app.authorize(&who, &from, Need::Write)?;
        app.authorize(&who, &id, Need::Read)?;
        app.asks.ask(&id, &from, &key, &map["run"])?;
        let watched = app.tell(&id, ask_event(&id, &from, &key, &map["run"]));
        Ok(json!({ "id": id, "asked": true, "watched": watched }))
    })
    .await
}

/// The asked player's outcome of the roll, once: kept with the ask until the asker collects it,
/// pushed to `to`'s subscribers as the event `answered`.
#[utoipa::path(
    post,
    path = "/api/characters/{id}/asks/answer",
    tag = "actions",
    params(("id" = String, Path, description = "The answering (asked) character's ID")),
    request_body = AskAnswer,
    responses(
        (status = 200, description = "Answered: kept for `to`, its pages told (`watched`: whether one is open now)", body = Told),
        (status = 409, description = "`already-answered`: the ask has its answer (`/key`)", body = Errors),
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
    let map = fields(
        body,
        &["to", "key", "outcome"],
        Some(("outcome", "the roll's outcome")),
    )?;
    let (to, key) = (text(&map, "to"), text(&map, "key"));
    blocking(app, move |app| {
        app.authorize(&who, &id, Need::Write)?;
        app.authorize(&who, &to, Need::Read)?;
        app.asks.answer(&id, &to, &key, &map["outcome"])?;
        let watched = app.tell(&to, answered_event(&to, &id, &key, &map["outcome"]));
        Ok(json!({ "id": id, "answered": true, "watched": watched }))
    })
    .await
}

/// The asker drops its ask: an unanswered one is taken back (`id`'s pages told `withdrawn`), an
/// answered one collected.
#[utoipa::path(
    post,
    path = "/api/characters/{id}/asks/withdraw",
    tag = "actions",
    params(("id" = String, Path, description = "The asked character's ID")),
    request_body = Withdraw,
    responses(
        (status = 200, description = "Dropped (`answered`: whether it had its answer)", body = Withdrawn),
        Reads,
    ),
)]
#[tracing::instrument(name = "serve.ask_withdraw", level = "info", skip_all, fields(character = %id))]
async fn withdraw(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Answer {
    let map = fields(body, &["from", "key"], None)?;
    let (from, key) = (text(&map, "from"), text(&map, "key"));
    blocking(app, move |app| {
        app.authorize(&who, &from, Need::Write)?;
        app.authorize(&who, &id, Need::Read)?;
        let unanswered = app.asks.withdraw(&id, &from, &key)?;
        if unanswered {
            app.tell(
                &id,
                json!({ "kind": "withdrawn", "id": id, "from": from, "key": key }),
            );
        }
        Ok(json!({ "id": id, "withdrawn": true, "answered": !unanswered }))
    })
    .await
}
