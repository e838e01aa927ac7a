//! Step 4, content-only queries: a query whose `where` reads only `item` is answered once, against
//! every non-hidden item of its type, and the sorted qualified IDs are stored.

use ocf_formula::{Formula as Parsed, MapContext, Root, Value};
use ocf_model::{
    Choice, ChoiceOptions, ChoiceSource, ContentEntry, EffectValue, GrantValue, Query, QueryResult,
    Ruleset,
};

use super::done;
use crate::error::{LoadErrorRecord, rules_path};
use crate::formulas::{ITEM_ONLY, check_one, env};

pub fn resolve(ruleset: &mut Ruleset) -> Result<(), Vec<LoadErrorRecord>> {
    let mut errors = Vec::new();
    // (query, is a standard copies query, pack, document path)
    let mut found: Vec<(Query, bool, String, String)> = Vec::new();
    for s in &ruleset.standard_copies {
        found.push((s.decl.clone(), true, s.pack.clone(), rules_path(&s.pack)));
    }
    for c in ruleset.choices.0.values() {
        choice_queries(
            std::slice::from_ref(&c.decl),
            &c.pack,
            &rules_path(&c.pack),
            &mut found,
        );
    }
    let sources = ruleset.sources.clone();
    for (qualified, entry) in ruleset.content.iter() {
        let index = sources
            .iter()
            .find(|r| r.id.as_str() == entry.pack)
            .and_then(|r| {
                r.content.iter().position(|i| {
                    i.id.as_ref()
                        .is_some_and(|id| format!("{}:{id}", entry.pack) == qualified)
                })
            })
            .unwrap_or(0);
        let path = crate::error::content_path(&entry.pack, index);
        for s in &entry.item.standard_copies {
            found.push((s.clone(), true, entry.pack.clone(), path.clone()));
        }
        choice_queries(&entry.item.choices, &entry.pack, &path, &mut found);
        for e in &entry.item.effects {
            if let Some(EffectValue::Grant(GrantValue::Query { query })) = &e.value {
                found.push((query.clone(), false, entry.pack.clone(), path.clone()));
            }
        }
    }
    let item_env = env(&[], ITEM_ONLY);
    let mut copies: Vec<(String, String)> = Vec::new();
    for (query, standard, pack, path) in found {
        let content_only = match &query.r#where {
            None => true,
            Some(w) => match check_one(w.as_str(), &item_env, None) {
                Ok(_) => true,
                Err((code, _)) if standard => {
                    errors.push(
                        LoadErrorRecord::new(
                            "formula-error",
                            format!("a standard copies query reads only `item`: `{w}`"),
                        )
                        .at(path.clone())
                        .with("cause", code.as_str())
                        .with("pack", pack.as_str())
                        .with("formula", w.as_str()),
                    );
                    continue;
                }
                Err(_) => false,
            },
        };
        if !content_only {
            continue;
        }
        let items = answer(ruleset, &query);
        if standard {
            for item in &items {
                if !copies.iter().any(|(_, i)| i == item) {
                    copies.push((instance_id(item), item.clone()));
                }
            }
        }
        let result = QueryResult {
            r#type: query.r#type.as_str().to_owned(),
            r#where: query.r#where.clone(),
            items,
        };
        if !ruleset.queries.contains(&result) {
            ruleset.queries.push(result);
        }
    }
    copies.sort();
    for pair in copies.chunk_by(|a, b| a.0 == b.0) {
        if pair.len() > 1 {
            errors.push(
                LoadErrorRecord::new(
                    "duplicate-id",
                    format!(
                        "standard copies of {} would share the instance ID `{}`",
                        pair.iter()
                            .map(|p| p.1.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                        pair[0].0
                    ),
                )
                .with("id", pair[0].0.as_str())
                .with(
                    "items",
                    pair.iter().map(|p| p.1.clone()).collect::<Vec<_>>(),
                ),
            );
        }
    }
    done(errors)
}

/// A standard copy's instance ID: "the item's qualified ID with the colon and dots as hyphens".
pub fn instance_id(item: &str) -> String {
    item.replace([':', '.'], "-")
}

fn choice_queries(
    choices: &[Choice],
    pack: &str,
    path: &str,
    out: &mut Vec<(Query, bool, String, String)>,
) {
    for choice in choices {
        match &choice.options {
            ChoiceOptions::Source(ChoiceSource::Content { content }) => {
                out.push((content.clone(), false, pack.to_owned(), path.to_owned()));
            }
            ChoiceOptions::Inline(options) => {
                for option in options {
                    choice_queries(&option.choices, pack, path, out);
                }
            }
            _ => {}
        }
    }
}

/// The non-hidden items of the query's type whose `where` holds, sorted. A `where` that fails on an
/// item (a missing field) does not match it.
fn answer(ruleset: &Ruleset, query: &Query) -> Vec<String> {
    let parsed = query
        .r#where
        .as_ref()
        .and_then(|w| Parsed::parse(w.as_str()).ok());
    let mut items: Vec<String> = ruleset
        .content
        .iter()
        .filter(|(_, e)| !e.hidden && e.type_name() == Some(query.r#type.as_str()))
        .filter(|(_, e)| match &parsed {
            None => query.r#where.is_none(),
            Some(f) => {
                let ctx = MapContext::new().with_root(Root::Item, item_view(e));
                f.evaluate(&ctx) == Ok(Value::Bool(true))
            }
        })
        .map(|(id, _)| id.to_owned())
        .collect();
    items.sort();
    items
}

/// `item` as a content-only query sees it: `id`, `type` (unqualified), `tags` and the item's
/// written fields, each as written (a formula value is read as its literal when it is one).
pub fn item_view(entry: &ContentEntry) -> Value {
    let item = &entry.item;
    let id = item
        .id
        .as_ref()
        .map(|i| i.as_str().to_owned())
        .unwrap_or_default();
    let ty = entry
        .type_name()
        .map(|t| t.split_once(':').map_or(t, |(_, n)| n))
        .unwrap_or_default();
    let mut members = vec![
        ("id".to_owned(), Value::string(id)),
        ("type".to_owned(), Value::string(ty)),
        (
            "tags".to_owned(),
            Value::list(
                item.tags
                    .iter()
                    .map(|t| Value::string(t.as_str()))
                    .collect(),
            ),
        ),
    ];
    for (name, literal) in item.fields.iter() {
        if let Ok(value) = Value::from_json(literal) {
            members.push((name.to_owned(), value));
        }
    }
    Value::map(members)
}
