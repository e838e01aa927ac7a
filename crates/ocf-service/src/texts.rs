//! The text layer's route (docs/spec/i18n.md, display-hints.md): a character's packs' texts in a
//! locale, and their display groups and field hints, so a page can name and lay out a sheet
//! without knowing a pack.
//!
//! | method and path | what it does |
//! | --- | --- |
//! | `GET /api/characters/{id}/texts?lang=TAG` | `{ id, locale, texts, displayGroups, fieldHints, oddsHints, fields, items, types, tags, actions, situational }`: every key the packs (and the engine) give, its message in `TAG` by the fallback order (ICU MessageFormat, as written); the ruleset's groups, field hints and odds hints; each hinted field's type and numeric `max`; each content item's type; each content type and whether it is carried; the ruleset's tags; the rules actions' parameters, participant roles and results; the situational choices |

use std::sync::Arc;

use axum::extract::{Extension, Path, Query, State};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::accounts::Who;
use crate::api::{Answer, blocking};
use crate::app::{App, Need};
use crate::error::ApiError;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<Arc<App>> {
    OpenApiRouter::new().routes(routes!(texts))
}

#[derive(Deserialize)]
struct Lang {
    lang: Option<String>,
}

/// The packs' texts in a locale (`invalid-locale`, 400, for a tag that is not BCP 47), with the
/// ruleset's display groups and field hints.
#[utoipa::path(
    get,
    path = "/api/characters/{id}/texts",
    tag = "characters",
    params(
        ("id" = String, Path, description = "The character's ID"),
        ("lang" = Option<String>, Query, description = "A BCP 47 locale tag; the ruleset's default when not given"),
    ),
    responses(
        (status = 200, description = "The texts", body = crate::openapi::Texts),
        crate::openapi::Reads,
    ),
)]
#[tracing::instrument(name = "serve.texts", level = "info", skip_all, fields(character = %id))]
async fn texts(
    State(app): State<Arc<App>>,
    Extension(who): Extension<Who>,
    Path(id): Path<String>,
    Query(query): Query<Lang>,
) -> Answer {
    blocking(app, move |app| {
        // The texts come from the character's packs: whoever may not read the character may
        // not learn which packs it uses either.
        app.authorize(&who, &id, Need::Read)?;
        answer(app, &id, query.lang.as_deref())
    })
    .await
}

fn answer(app: &App, id: &str, lang: Option<&str>) -> Result<Value, ApiError> {
    let ruleset = app.ruleset_of(id)?;
    let locale = match lang {
        Some(lang) if ocf_model::text::valid_locale(lang) => lang.to_owned(),
        Some(lang) => {
            return Err(ApiError::bad_request(
                "invalid-locale",
                format!("`{lang}` is not a BCP 47 locale tag"),
                "/lang",
            ));
        }
        None => ruleset.default_locale(),
    };
    let texts = ruleset.texts.texts(&locale);
    let mut messages = Map::new();
    let engine = ocf_model::text::engine_texts().iter().map(|(k, _)| k);
    for key in ruleset.texts.keys().into_iter().chain(engine) {
        if let Some(found) = texts.message(key) {
            messages.insert(key.to_owned(), Value::String(found.message.to_owned()));
        }
    }
    Ok(json!({
        "id": id,
        "locale": locale,
        "texts": messages,
        "displayGroups": ruleset.display_groups,
        "fieldHints": ruleset.field_hints,
        "oddsHints": ruleset.odds_hints,
        "fields": hinted_fields(&ruleset),
        "items": items(&ruleset),
        "types": ruleset
            .content_types
            .iter()
            .map(|(id, t)| (id.to_owned(), json!({ "carried": t.decl.carried.unwrap_or(false) })))
            .collect::<Map<String, Value>>(),
        "tags": ruleset.tags,
        "actions": actions(&ruleset),
        "situational": situational(&ruleset),
    }))
}

/// Each hinted field's type and its `max` bound when it is a number, for a page that draws dots
/// and tracks and edits inputs by their type.
fn hinted_fields(ruleset: &ocf_model::Ruleset) -> Map<String, Value> {
    let mut out = Map::new();
    for (_, hint) in ruleset.field_hints.iter() {
        let hint = &hint.decl;
        for field in [Some(&hint.field), hint.of.as_ref(), hint.beside.as_ref()]
            .into_iter()
            .flatten()
        {
            let Some(decl) = ruleset.field(field.as_str()) else {
                continue;
            };
            let max = decl
                .decl
                .max
                .as_ref()
                .and_then(|m| m.as_str().trim().parse::<f64>().ok());
            out.insert(
                field.as_str().to_owned(),
                json!({ "type": decl.decl.r#type, "max": max }),
            );
        }
    }
    out
}

/// Every content item's type (an item's name is its text), for content groups and for finding an
/// item by name; hidden items are left out.
fn items(ruleset: &ocf_model::Ruleset) -> Map<String, Value> {
    ruleset
        .content
        .iter()
        .filter(|(_, entry)| !entry.hidden)
        .map(|(id, entry)| (id.to_owned(), json!(entry.type_name())))
        .collect()
}

/// The rules actions' forms: each declared parameter, participant role and result, so a page can
/// ask for what an action takes (steps are the engine's).
fn actions(ruleset: &ocf_model::Ruleset) -> Map<String, Value> {
    ruleset
        .actions
        .iter()
        .map(|(id, action)| {
            let decl = &action.decl;
            let params: Map<String, Value> = decl
                .params
                .iter()
                .filter_map(|(name, entry)| match entry {
                    ocf_model::ParamEntry::Declared(p) => Some((
                        name.to_owned(),
                        serde_json::to_value(p).unwrap_or(Value::Null),
                    )),
                    ocf_model::ParamEntry::Fixed(_) => None,
                })
                .collect();
            let participants: Map<String, Value> = decl
                .participants
                .iter()
                .map(|(role, r)| {
                    let fields = serde_json::to_value(&r.fields).unwrap_or(Value::Null);
                    (
                        role.to_owned(),
                        json!({ "min": r.min, "max": r.max, "fields": fields }),
                    )
                })
                .collect();
            (
                id.to_owned(),
                json!({ "params": params, "participants": participants, "results": decl.results }),
            )
        })
        .collect()
}

/// The situational choices a player sets when an action runs: type, values, default.
fn situational(ruleset: &ocf_model::Ruleset) -> Map<String, Value> {
    ruleset
        .situational
        .iter()
        .map(|(id, s)| {
            let decl = &s.decl;
            (
                id.to_owned(),
                json!({ "type": decl.r#type, "values": decl.values, "default": decl.default }),
            )
        })
        .collect()
}
