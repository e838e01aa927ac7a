//! A content item's field values against their declarations (catalogue "Item field
//! declarations": a content type's `fields`, and `templateFields`): a name neither declares is an
//! `unknown-key` (with the nearest declared name), and an `enum` field's value not among its
//! `values` is a `type-mismatch` (with the nearest value). Checked only when every declaration
//! the item's type may have is in sight (the type found in the pack or a given dependency).

use ocf_model::{ContentItem, ContentTypeDecl, ItemFieldDecl, PackRelease};
use rustc_hash::FxHashMap;

use super::content::Placed;
use super::locations::escape;
use super::problem::Problem;
use ocf_model::nearest_key;

pub fn check(
    release: &PackRelease,
    dependencies: &[&PackRelease],
    placed: &[Placed<'_>],
    problems: &mut Vec<Problem>,
) {
    let own = release.id.as_str();
    let packs = || std::iter::once(release).chain(dependencies.iter().copied());
    let by_id: FxHashMap<&str, &ContentItem> = release
        .content
        .iter()
        .rev()
        .filter_map(|item| Some((item.id.as_ref()?.as_str(), item)))
        .collect();
    // The item's content type: its own `type`, else its nearest parent's in the pack.
    let type_of = |item: &ContentItem| -> Option<&ContentTypeDecl> {
        let mut current = item;
        for _ in 0..=release.content.len() {
            if let Some(ty) = &current.r#type {
                let ty = ty.as_str();
                return match ty.split_once(':') {
                    Some((p, local)) => packs()
                        .find(|r| r.id.as_str() == p)?
                        .rules
                        .content_types
                        .get(local),
                    None => packs().find_map(|r| r.rules.content_types.get(ty)),
                };
            }
            let parent = current.r#override.as_ref().or(current.extends.as_ref())?;
            let local = match parent.as_str().split_once(':') {
                Some((p, local)) if p == own => local,
                Some(_) => return None,
                None => parent.as_str(),
            };
            current = by_id.get(local)?;
        }
        None
    };
    let template_field = |name: &str| -> Option<&ItemFieldDecl> {
        packs().find_map(|r| r.rules.template_fields.get(name))
    };
    for at in placed {
        let item = at.item;
        if item.fields.is_empty() {
            continue;
        }
        let Some(ty) = type_of(item) else {
            continue;
        };
        for (name, value) in item.fields.iter() {
            let pointer = format!("{}/fields/{}", at.pointer, escape(name));
            let Some(decl) = ty.fields.get(name).or_else(|| template_field(name)) else {
                let declared =
                    ty.fields.iter().map(|(k, _)| k).chain(
                        packs().flat_map(|r| r.rules.template_fields.iter().map(|(k, _)| k)),
                    );
                let suggestion = nearest_key(name, declared);
                let mut message = format!(
                    "unknown item field `{name}`: neither the item's content type nor \
                     `templateFields` declares it"
                );
                if let Some(suggestion) = suggestion {
                    message.push_str(&format!(", did you mean `{suggestion}`?"));
                }
                let mut problem = Problem::error("unknown-key", message)
                    .in_file(at.file)
                    .at(&pointer, at.locations.key(&pointer))
                    .with("key", name);
                if let Some(suggestion) = suggestion {
                    problem = problem.with("suggestion", suggestion);
                }
                problems.push(problem);
                continue;
            };
            if decl.r#type != ocf_model::FieldType::Enum
                || value.is_null()
                || decl.values.is_empty()
                || decl.values.contains(value)
            {
                continue;
            }
            let allowed: Vec<String> = decl.values.iter().map(|v| v.to_string()).collect();
            let written = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            let suggestion = value
                .as_str()
                .and_then(|v| nearest_key(v, decl.values.iter().filter_map(|v| v.as_str())));
            let mut message = format!(
                "`{written}` is not a value of the enum field `{name}` (one of {})",
                allowed.join(", ")
            );
            if let Some(suggestion) = suggestion {
                message.push_str(&format!(", did you mean `{suggestion}`?"));
            }
            let mut problem = Problem::error("type-mismatch", message)
                .in_file(at.file)
                .at(&pointer, at.locations.value(&pointer))
                .with("field", name)
                .with("value", value.clone());
            if let Some(suggestion) = suggestion {
                problem = problem.with("suggestion", suggestion);
            }
            problems.push(problem);
        }
    }
}
