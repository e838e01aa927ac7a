//! The API's OpenAPI description, served at `GET /api/openapi.json` so an app generates its
//! client from it. It is generated (utoipa) from the same table the router is built from
//! ([`crate::api::routes`]: each handler's `#[utoipa::path]` gives its method, path, parameters,
//! body and answers), so a route cannot be served without being described.
//!
//! The types below are the bodies the routes take and the answers they give, as JSON: the
//! handlers read a request's body key by key (each wrong key answered with its own code and
//! path) and the answers are built as JSON by [`crate::app`], so these types describe them rather
//! than carry them; `tests/openapi.rs` checks real answers against them.
#![allow(dead_code)]

use std::sync::Arc;

use axum::Extension;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::Value;
use utoipa::{OpenApi, ToSchema};

/// The description's root: what the API is, its tags, how a caller logs in. The paths come from
/// the router's table.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "ocf serve",
        description = "The Open Character Format engine as a service: characters stored and \
                       kept open, their sheets computed (computeSheet), edited (input values, \
                       applyChanges), their choices' options listed (listOptions), actions run \
                       (startAction / continueAction) and their odds worked out, every write \
                       made against a revision (`409 conflict` when another came first) and \
                       kept in a history. Every error answers `{ errors: [{ code, message, path, \
                       data? }] }`. See docs/service.md."
    ),
    tags(
        (name = "characters", description = "Stored characters: files, sheets, edits, history"),
        (name = "actions", description = "startAction, continueAction and odds"),
        (name = "accounts", description = "Logging in (a service with accounts)"),
        (name = "page", description = "The web sheet editor's files"),
    ),
    modifiers(&Security),
)]
pub struct Root;

/// The two ways to log in: a bearer token (`ocf users token`) or the session cookie `POST
/// /api/login` sets. An open service (no account, loopback only) asks for neither.
struct Security;

impl utoipa::Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder};
        use utoipa::openapi::security::{SecurityRequirement, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "token",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(crate::guard::COOKIE))),
        );
        openapi.security = Some(vec![
            SecurityRequirement::new("token", Vec::<String>::new()),
            SecurityRequirement::new("session", Vec::<String>::new()),
            SecurityRequirement::default(),
        ]);
    }
}

/// `GET /api/openapi.json`: this description.
#[utoipa::path(
    get,
    path = "/api/openapi.json",
    tag = "page",
    responses((status = 200, description = "The API's OpenAPI 3.1 description",
               content_type = "application/json", body = Object), Guarded),
)]
pub(crate) async fn served(Extension(description): Extension<Arc<String>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        description.as_str().to_owned(),
    )
}

/// The description of every route [`crate::api::router`] serves.
pub fn description() -> utoipa::openapi::OpenApi {
    crate::api::routes().into_openapi()
}

// ---- errors ------------------------------------------------------------------------------------

/// Every refusal: one or more errors (a batch refused by the engine gives one per change).
#[derive(ToSchema)]
pub struct Errors {
    pub errors: Vec<Error>,
}

/// One error. `code` is the spec's where one applies (the engine's and the reader's codes:
/// `unknown-field`, `wrong-type`, `invalid-choice`, `safety-limit-exceeded`, ...), else the
/// service's own: `invalid-request`, `missing-revision`, `conflict`, `duplicate-id`, `invalid-id`,
/// `not-found`, `unknown-revision`, `nothing-to-undo`, `unknown-user`, `forbidden`,
/// `unauthenticated`, `invalid-credentials`, `forbidden-host`, `forbidden-origin`,
/// `unsupported-media-type`, `payload-too-large`, `request-timeout`, `too-many-open`,
/// `invalid-state`, `foreign-state`, `stale-state`, `invalid-locale`, `method-not-allowed`,
/// `store-error`, `internal-error`.
#[derive(ToSchema)]
pub struct Error {
    #[schema(example = "conflict")]
    pub code: String,
    pub message: String,
    /// A JSON pointer into what the request sent or named (empty for the whole request).
    #[schema(example = "/revision")]
    pub path: String,
    /// What the code names: `revision` and `given` for a conflict, `limit`, `id`, `field`, ...
    #[schema(value_type = Option<Object>)]
    pub data: Option<Value>,
}

// ---- request bodies ----------------------------------------------------------------------------

/// `POST /api/characters`.
#[derive(ToSchema)]
pub struct NewCharacter {
    /// The ID it is stored under; the file's own `id` when not given.
    pub id: Option<String>,
    /// The character file: an object, or its text (YAML or JSON).
    #[schema(value_type = Object)]
    pub character: Value,
    /// Who owns it (gamemaster only); the caller when not given.
    pub owner: Option<String>,
}

/// `PUT /api/characters/{id}`: the whole file, made against `revision`.
#[derive(ToSchema)]
pub struct Replace {
    /// The revision the write was made against (`409 conflict` if it is not the stored one).
    pub revision: u64,
    /// The character file: an object, or its text.
    #[schema(value_type = Object)]
    pub character: Value,
}

/// `PUT /api/characters/{id}/values/{field}`.
#[derive(ToSchema)]
pub struct SetValue {
    pub revision: u64,
    /// The input field's new saved value; `null` clears it.
    #[schema(value_type = Object)]
    pub value: Value,
}

/// `POST /api/characters/{id}/changes`: applyChanges as one write.
#[derive(ToSchema)]
pub struct Apply {
    pub revision: u64,
    /// The batch of changes (the spec's applyChanges input).
    #[schema(value_type = Vec<Object>)]
    pub changes: Value,
    /// Refuse the whole batch on any error (applyChanges' `strict`).
    pub strict: Option<bool>,
    /// The dice's seed for rolled changes (gamemaster only).
    pub seed: Option<u64>,
}

/// `POST /api/characters/{id}/options`.
#[derive(ToSchema)]
pub struct Options {
    /// The choice's path: `{ entry?, choice: [...] }` (the spec's listOptions input).
    #[schema(value_type = Object)]
    pub path: Value,
}

/// `POST /api/characters/{id}/actions` and `…/odds`: the spec's startAction input.
#[derive(ToSchema)]
pub struct StartAction {
    /// The action: `{ id, entry? }` (a rules action, or an entry's).
    #[schema(value_type = Object)]
    pub action: Value,
    #[schema(value_type = Option<Object>)]
    pub params: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub situational: Option<Value>,
    /// When to pause: for dice, choices, … (a player may not pause for dice unless `ocf serve
    /// --player-dice`).
    #[schema(value_type = Option<Object>)]
    pub policy: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub participants: Option<Value>,
    #[schema(value_type = Option<Vec<Object>>)]
    pub answers: Option<Value>,
    /// The dice's seed (gamemaster only; not taken by `…/odds`).
    pub seed: Option<u64>,
    /// `…/odds` only: a batch of changes applied first to a copy of the character.
    #[schema(value_type = Option<Vec<Object>>)]
    pub trial: Option<Value>,
}

/// `POST /api/characters/{id}/actions/continue`.
#[derive(ToSchema)]
pub struct ContinueAction {
    /// The paused result's `state`, as the service handed it out (signed).
    #[schema(value_type = Object)]
    pub state: Value,
    /// The answer to its pause (the spec's continueAction answer).
    #[schema(value_type = Object)]
    pub answer: Value,
    pub seed: Option<u64>,
}

/// `POST /api/characters/{id}/revert`.
#[derive(ToSchema)]
pub struct Revert {
    pub revision: u64,
    /// The kept revision whose file becomes current again.
    pub to: u64,
}

/// `POST /api/characters/{id}/undo`: undoes the write that made `revision` (the current one).
#[derive(ToSchema)]
pub struct Undo {
    pub revision: u64,
}

/// `PUT /api/characters/{id}/ownership` (gamemaster only).
#[derive(ToSchema)]
pub struct SetOwnership {
    pub owner: Option<String>,
    pub shared: Option<bool>,
}

/// `POST /api/login`.
#[derive(ToSchema)]
pub struct Login {
    pub user: String,
    pub password: String,
}

// ---- answers -----------------------------------------------------------------------------------

/// One stored character in the list.
#[derive(ToSchema)]
pub struct Listed {
    pub id: String,
    pub revision: u64,
    /// Whether it is open in this instance.
    pub open: bool,
    pub owner: Option<String>,
    pub shared: bool,
    /// The character's name: the saved value of the field its ruleset's hints mark `title`
    /// (`null` when it has none, or its file does not load).
    pub name: Option<String>,
}

/// A character's sheet: computeSheet's output, and its input fields.
#[derive(ToSchema)]
pub struct Sheet {
    pub id: String,
    pub revision: u64,
    /// computeSheet's output (`values`, `sections`, `errors`, ...).
    #[schema(value_type = Object)]
    pub sheet: Value,
    /// Each input field of the sheet: `{ type, values? }`.
    #[schema(value_type = Object)]
    pub inputs: Value,
}

/// A character's file.
#[derive(ToSchema)]
pub struct File {
    pub id: String,
    pub revision: u64,
    #[schema(value_type = Object)]
    pub character: Value,
}

/// One field of the sheet.
#[derive(ToSchema)]
pub struct Field {
    pub id: String,
    pub revision: u64,
    /// The field's full ID (`pack:field`).
    pub field: String,
    /// Its value on the sheet (`{ value, ... }`).
    #[schema(value_type = Object)]
    pub value: Value,
}

/// What a write changed on the sheet (also each `changed` server-sent event).
#[derive(ToSchema)]
pub struct Changes {
    /// Each changed field's new value.
    #[schema(value_type = Object)]
    pub values: Value,
    /// The fields no longer on the sheet.
    pub removed: Vec<String>,
    /// The changed parts of the sheet other than values (sections, errors, ...).
    #[schema(value_type = Object)]
    pub parts: Value,
}

/// A write's answer: the new revision and what changed.
#[derive(ToSchema)]
pub struct Written {
    pub id: String,
    pub revision: u64,
    pub changes: Changes,
    /// applyChanges' output (`POST …/changes` only).
    #[schema(value_type = Option<Object>)]
    pub applied: Option<Value>,
}

/// listOptions' output for a choice.
#[derive(ToSchema)]
pub struct Listing {
    pub id: String,
    pub revision: u64,
    #[schema(value_type = Object)]
    pub options: Value,
}

/// An action's result: finished (with its proposed changes) or paused (with `needs` and a signed
/// `state` that any instance continues).
#[derive(ToSchema)]
pub struct ActionResult {
    pub id: String,
    pub revision: u64,
    #[schema(value_type = Object)]
    pub result: Value,
}

/// An action's odds, as `ocf odds --json` gives them.
#[derive(ToSchema)]
pub struct Odds {
    pub id: String,
    pub revision: u64,
    /// `{ results, participants, changes, outcomes }`.
    #[schema(value_type = Object)]
    pub odds: Value,
}

/// `POST /api/characters/{id}/asks`: a roll of `from`'s action asked of `id`'s player.
#[derive(ToSchema)]
pub struct Ask {
    /// The asking character (the caller may write it and read `id`).
    pub from: String,
    /// The asker's own key for the roll, given back with the answer.
    pub key: String,
    /// The handoff's run, as a handoff pause gives it: `{ action, params?, participants? }`.
    #[schema(value_type = Object)]
    pub run: Value,
}

/// `POST /api/characters/{id}/asks/answer`: `id`'s player's outcome of an asked roll.
#[derive(ToSchema)]
pub struct AskAnswer {
    /// The asking character (the caller may write `id` and read `to`).
    pub to: String,
    /// The key the ask gave.
    pub key: String,
    /// The roll's outcome, as continueAction's handoff answer takes it.
    #[schema(value_type = Object)]
    pub outcome: Value,
}

/// An ask kept on `id` and told to its pages.
#[derive(ToSchema)]
pub struct Asked {
    pub id: String,
    pub asked: bool,
    /// Whether a page was open on `id` to be told now (else it is told when one opens).
    pub watched: bool,
}

/// An answer kept for `to` and told to its pages.
#[derive(ToSchema)]
pub struct Told {
    pub id: String,
    pub answered: bool,
    /// Whether a page was open on `to` to be told now (else it is told when one opens).
    pub watched: bool,
}

/// `POST /api/characters/{id}/asks/withdraw`: the asker drops its ask of `id`.
#[derive(ToSchema)]
pub struct Withdraw {
    /// The asking character (the caller may write it and read `id`).
    pub from: String,
    /// The key the ask gave.
    pub key: String,
}

/// A dropped ask.
#[derive(ToSchema)]
pub struct Withdrawn {
    pub id: String,
    pub withdrawn: bool,
    /// Whether it had its answer (collected) rather than still waiting (taken back).
    pub answered: bool,
}

/// A kept write in the history.
#[derive(ToSchema)]
pub struct Kept {
    pub revision: u64,
    /// Who wrote it (`null` on an open service).
    pub author: Option<String>,
    /// The write in words ("set hp.current to 12", "applied 2 changes", ...).
    pub what: String,
    /// When, in seconds since 1970.
    pub at: i64,
}

/// A character's history, newest first.
#[derive(ToSchema)]
pub struct History {
    pub id: String,
    /// The current revision.
    pub revision: u64,
    pub history: Vec<Kept>,
}

/// The file at a kept revision.
#[derive(ToSchema)]
pub struct RevisionFile {
    pub id: String,
    pub revision: u64,
    /// The current revision.
    pub current: u64,
    #[schema(value_type = Object)]
    pub character: Value,
}

/// A closed character (it stays stored).
#[derive(ToSchema)]
pub struct Closed {
    pub id: String,
    /// Whether it was open.
    pub closed: bool,
}

/// A removed character.
#[derive(ToSchema)]
pub struct Deleted {
    pub id: String,
    pub deleted: bool,
}

/// Who owns a character, whether it is shared.
#[derive(ToSchema)]
pub struct Owned {
    pub id: String,
    pub owner: Option<String>,
    pub shared: bool,
}

/// The packs' texts in a locale, with the display groups and field hints.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Texts {
    pub id: String,
    pub locale: String,
    /// Each text key's message in the locale (ICU MessageFormat).
    #[schema(value_type = Object)]
    pub texts: Value,
    /// The ruleset's display groups, by ID.
    #[schema(value_type = Object)]
    pub display_groups: Value,
    #[schema(value_type = Object)]
    pub field_hints: Value,
    /// The ruleset's odds hints, by ID: one phrase of an action's odds summary each (the results
    /// whose chances add up, the field whose expected change is summed; text `odds.<id>.name`).
    #[schema(value_type = Object)]
    pub odds_hints: Value,
    #[schema(value_type = Object)]
    pub fields: Value,
    #[schema(value_type = Object)]
    pub items: Value,
    #[schema(value_type = Object)]
    pub types: Value,
    /// The ruleset's tags.
    pub tags: Vec<String>,
    #[schema(value_type = Object)]
    pub actions: Value,
    #[schema(value_type = Object)]
    pub situational: Value,
}

/// Who a request logs in as.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Me {
    /// `null` on an open service.
    pub user: Option<String>,
    /// `gamemaster`, `player` or `observer`.
    pub role: String,
    /// Whether the service is open (no account).
    pub open: bool,
    /// Whether players roll their own dice.
    pub player_dice: bool,
}

/// A login's answer (and its `Set-Cookie`).
#[derive(ToSchema)]
pub struct LoggedIn {
    pub user: Option<String>,
    pub role: String,
    pub open: bool,
}

/// A logout's answer.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct LoggedOut {
    pub logged_out: bool,
}

// ---- error answers -----------------------------------------------------------------------------

/// Error answers with the `Errors` body, each status with what it says.
fn errors(
    described: &[(&str, &str)],
) -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::Response>> {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    described
        .iter()
        .map(|(status, description)| {
            let content = ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Errors")))
                .build();
            let response = ResponseBuilder::new()
                .description(*description)
                .content("application/json", content)
                .build();
            (status.to_string(), response.into())
        })
        .collect()
}

const UNAUTHENTICATED: (&str, &str) = (
    "401",
    "`unauthenticated`: no login, or a token unknown, revoked or expired",
);
const HOST: (&str, &str) = (
    "421",
    "`forbidden-host`: the service is not reached under that host name",
);
const TIMEOUT: (&str, &str) = ("408", "`request-timeout`: the request took too long");
const INTERNAL: (&str, &str) = ("500", "`internal-error`");
const BUSY: (&str, &str) = (
    "503",
    "`too-many-open`: every open character is watched at the limit; `store-error`: the store \
     cannot be reached",
);

/// What any route may answer besides its own: the guard's refusals.
pub struct Guarded;

impl utoipa::IntoResponses for Guarded {
    fn responses()
    -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::Response>> {
        errors(&[
            ("400", "`forbidden-host`: the request names no host"),
            (
                "403",
                "`forbidden-origin`: a page at another origin sent it",
            ),
            TIMEOUT,
            HOST,
            INTERNAL,
        ])
    }
}

/// What a read of a character may answer besides its own.
pub struct Reads;

impl utoipa::IntoResponses for Reads {
    fn responses()
    -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::Response>> {
        errors(&[
            (
                "400",
                "`invalid-request`: the body does not read (a read that takes one), \
                     `wrong-type`: a key of the wrong type; `forbidden-host`",
            ),
            UNAUTHENTICATED,
            (
                "403",
                "`forbidden`: the caller may not read this character; `forbidden-origin`",
            ),
            (
                "404",
                "`not-found`: no such character (one the caller may not see is not told \
                     apart); `unknown-field`, `unknown-revision`, `unknown-ask` where the route names one",
            ),
            TIMEOUT,
            (
                "413",
                "`payload-too-large`: the body (of a read that takes one) is larger than the \
                     service takes",
            ),
            (
                "415",
                "`unsupported-media-type`: a body not sent as `application/json`",
            ),
            HOST,
            (
                "422",
                "the stored file does not open: its ruleset's errors (`pack-not-found`, ...), \
                     `safety-limit-exceeded`; the engine's refusal of the request (its code and \
                     path)",
            ),
            INTERNAL,
            BUSY,
        ])
    }
}

/// What a write to a character may answer besides its own.
pub struct Writes;

impl utoipa::IntoResponses for Writes {
    fn responses()
    -> std::collections::BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::Response>> {
        errors(&[
            (
                "400",
                "`invalid-request`: the body is not a JSON object or lacks a key; \
                     `missing-revision`: no `revision`; `wrong-type`: a key of the wrong type; \
                     the engine's or reader's refusal of the batch or file (its code and path); \
                     `forbidden-host`",
            ),
            UNAUTHENTICATED,
            (
                "403",
                "`forbidden`: the caller may not write this character (or give a `seed`, or \
                     pause for dice at a table where the service rolls them); \
                     `forbidden-origin`",
            ),
            ("404", "`not-found`: no such character; `unknown-revision`"),
            TIMEOUT,
            (
                "409",
                "`conflict`: the character is at another revision than the write was made \
                     against (`data.revision` is the current one): read it again and redo the \
                     edit; `nothing-to-undo`; `duplicate-id`; `stale-state`: a paused action's \
                     state made before the character's last write",
            ),
            (
                "413",
                "`payload-too-large`: the body is larger than the service takes",
            ),
            (
                "415",
                "`unsupported-media-type`: the body is not sent as `application/json`",
            ),
            HOST,
            (
                "422",
                "the engine refuses the edit: the sheet's errors it would make (`wrong-type`, \
                     `out-of-range`, `not-an-input`, ...) each with its path, \
                     `safety-limit-exceeded`; `unknown-user`; `invalid-state`, `foreign-state` \
                     for a continued action's state",
            ),
            INTERNAL,
            BUSY,
        ])
    }
}
