//! Step 2, merge the rules: declarations keyed by qualified ID, tags as a union, settings key by key,
//! creation starts, template fields, link slots and follow-ups.

use ocf_model::{Declared, FollowUp, Namespace, PackRelease, ParamEntry, Ruleset, Settings, Tag};
use serde_json::{Map, Value};

use ocf_model::refs::Walk;
use rustc_hash::FxHashMap;

use super::done;
use super::qualify::Qualifier;
use crate::error::{LoadErrorRecord, content_path, rules_path};

pub fn merge(ruleset: &mut Ruleset, releases: &[PackRelease]) -> Result<(), Vec<LoadErrorRecord>> {
    let mut errors = Vec::new();
    let mut settings = Map::new();
    let mut setting_owner: Vec<(String, String)> = Vec::new();
    for release in releases {
        let pack = release.id.as_str();
        let rules = &release.rules;
        let q = |id: &str| format!("{pack}:{id}");
        for tag in &rules.tags {
            add_tag(&mut ruleset.tags, tag);
        }
        // Texts by load order: a later pack's key replaces an earlier one's (i18n.md).
        if !release.texts.is_empty() || release.default_locale.is_some() {
            ruleset
                .texts
                .add_pack(pack, release.default_locale.as_deref(), &release.texts);
        }
        for (id, f) in rules.fields.iter() {
            ruleset
                .fields
                .0
                .insert(q(id), Declared::new(pack, f.clone()));
        }
        for (id, t) in rules.content_types.iter() {
            ruleset
                .content_types
                .0
                .insert(q(id), Declared::new(pack, t.clone()));
        }
        for (id, s) in rules.situational.iter() {
            ruleset
                .situational
                .0
                .insert(q(id), Declared::new(pack, s.clone()));
        }
        for (id, b) in rules.bands.iter() {
            ruleset
                .bands
                .0
                .insert(q(id), Declared::new(pack, b.clone()));
        }
        if !rules.roll_tallies.is_empty() {
            ruleset
                .roll_tallies
                .0
                .insert(pack.to_owned(), rules.roll_tallies.clone());
        }
        for a in &rules.actions {
            if let Some(id) = &a.id {
                ruleset
                    .actions
                    .0
                    .insert(q(id), Declared::new(pack, a.clone()));
            }
        }
        for c in &rules.choices {
            ruleset
                .choices
                .0
                .insert(q(&c.id), Declared::new(pack, c.clone()));
        }
        for (id, c) in rules.constraints.iter() {
            ruleset
                .constraints
                .0
                .insert(q(id), Declared::new(pack, c.clone()));
        }
        for (id, l) in rules.links.iter() {
            ruleset
                .links
                .0
                .insert(q(id), Declared::new(pack, l.clone()));
        }
        for g in &rules.display_groups {
            ruleset
                .display_groups
                .0
                .insert(g.id.clone(), Declared::new(pack, g.clone()));
        }
        for h in &rules.field_hints {
            ruleset
                .field_hints
                .0
                .insert(h.id.clone(), Declared::new(pack, h.clone()));
        }
        for h in &rules.odds_hints {
            ruleset
                .odds_hints
                .0
                .insert(h.id.clone(), Declared::new(pack, h.clone()));
        }
        for s in &rules.standard_copies {
            ruleset.standard_copies.push(Declared::new(pack, s.clone()));
        }
        for i in &rules.immune_to {
            ruleset.immune_to.push(Declared::new(pack, i.clone()));
        }
        for e in &rules.effects {
            ruleset.effects.push(Declared::new(pack, e.clone()));
        }
        if let Some(s) = &rules.settings {
            let json = serde_json::to_value(s).unwrap_or_default();
            merge_settings(&mut settings, &json, "", pack, &mut setting_owner, ruleset);
        }
        merge_template_fields(ruleset, pack, release, &mut errors);
        for start in &rules.creation {
            let mut start = start.clone();
            start.random = Some(start.random.unwrap_or(false));
            let declared = Declared::new(pack, start);
            match ruleset
                .creation
                .iter_mut()
                .find(|s| s.decl.id == declared.decl.id)
            {
                Some(earlier) => *earlier = declared,
                None => ruleset.creation.push(declared),
            }
        }
    }
    ruleset.tags.sort();
    ruleset.tags.dedup();
    ruleset.settings =
        serde_json::from_value::<Settings>(Value::Object(settings)).unwrap_or_default();

    check_creation(ruleset, &mut errors);
    check_links(ruleset, &mut errors);
    check_display(ruleset, &mut errors);
    for release in releases {
        let pack = release.id.as_str();
        for f in &release.rules.follow_ups {
            match follow_up(ruleset, pack, f, &rules_path(pack), &mut errors) {
                Some(f) => {
                    ruleset
                        .follow_ups
                        .0
                        .insert(format!("{pack}:{}", f.id), Declared::new(pack, f));
                }
                None => continue,
            }
        }
        for (name, t) in release.rules.content_types.iter() {
            for f in &t.follow_ups {
                follow_up(ruleset, pack, f, &rules_path(pack), &mut errors);
            }
            let _ = name;
        }
        for (i, item) in release.content.iter().enumerate() {
            for f in &item.follow_ups {
                follow_up(ruleset, pack, f, &content_path(pack, i), &mut errors);
            }
        }
    }
    done(errors)
}

/// Adds `tag` and every tag above it.
pub fn add_tag(tags: &mut Vec<Tag>, tag: &Tag) {
    let text = tag.as_str();
    for (i, c) in text.char_indices() {
        if c == '.' {
            tags.push(Tag(text[..i].to_owned()));
        }
    }
    tags.push(tag.clone());
}

/// Settings merge key by key (leaves are dotted keys); a later pack's different value is a conflict.
fn merge_settings(
    into: &mut Map<String, Value>,
    from: &Value,
    prefix: &str,
    pack: &str,
    owners: &mut Vec<(String, String)>,
    ruleset: &mut Ruleset,
) {
    let Value::Object(from) = from else { return };
    for (key, value) in from {
        let dotted = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        if let Value::Object(_) = value {
            let entry = into
                .entry(key.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(inner) = entry {
                merge_settings(inner, value, &dotted, pack, owners, ruleset);
            }
            continue;
        }
        if let Some(earlier) = into.get(key)
            && earlier != value
            && let Some((_, owner)) = owners.iter().find(|(k, _)| *k == dotted)
        {
            ruleset.conflicts.push(ocf_model::Conflict::Setting {
                key: dotted.clone(),
                packs: [owner.clone(), pack.to_owned()],
            });
        }
        into.insert(key.clone(), value.clone());
        owners.retain(|(k, _)| *k != dotted);
        owners.push((dotted, pack.to_owned()));
    }
}

fn merge_template_fields(
    ruleset: &mut Ruleset,
    pack: &str,
    release: &PackRelease,
    errors: &mut Vec<LoadErrorRecord>,
) {
    for (name, decl) in release.rules.template_fields.iter() {
        if let Some(earlier) = ruleset.template_fields.get(name)
            && (earlier.decl.r#type != decl.r#type
                || earlier.decl.of != decl.of
                || earlier.decl.values != decl.values)
        {
            errors.push(
                LoadErrorRecord::new(
                    "template-field-mismatch",
                    format!(
                        "template field `{name}` of `{pack}` differs in type, of or values from `{}`'s",
                        earlier.pack
                    ),
                )
                .at(rules_path(pack))
                .with("field", name)
                .with("packs", vec![earlier.pack.clone(), pack.to_owned()]),
            );
        }
        ruleset.template_fields.0.shift_remove(name);
        ruleset
            .template_fields
            .0
            .insert(name.to_owned(), Declared::new(pack, decl.clone()));
    }
}

fn unknown_reference(pack: &str, path: String, what: &str, id: &str) -> LoadErrorRecord {
    LoadErrorRecord::new(
        "unknown-reference",
        format!("{what} `{id}` in pack `{pack}` names nothing"),
    )
    .at(path)
    .with("id", id)
    .with("pack", pack)
}

/// Qualifies a declaration of step 2 in its declaring pack, as step 3 qualifies the rest (see
/// [`Qualifier`]).
fn qualify<T>(
    ruleset: &Ruleset,
    declared: &mut Declared<T>,
    walk: fn(&mut Walk, &mut T),
    errors: &mut Vec<LoadErrorRecord>,
) {
    let path = rules_path(&declared.pack);
    let mut tags = FxHashMap::default();
    let mut qualifier = Qualifier::new(ruleset, &declared.pack, &path, errors, &mut tags);
    walk(&mut Walk::new(&mut qualifier), &mut declared.decl);
}

/// Each start's action is qualified and must have every required parameter.
fn check_creation(ruleset: &mut Ruleset, errors: &mut Vec<LoadErrorRecord>) {
    for i in 0..ruleset.creation.len() {
        let mut start = ruleset.creation[i].clone();
        qualify(ruleset, &mut start, |w, s| w.creation_start(s), errors);
        let Some(action) = ruleset.actions.get(start.decl.action.as_str()) else {
            continue;
        };
        let pack = start.pack.as_str();
        for (name, param) in action.decl.params.iter() {
            let required = match param {
                ParamEntry::Declared(d) => d.optional != Some(true) && d.default.is_none(),
                ParamEntry::Fixed(_) => false,
            };
            if required && start.decl.params.get(name).is_none() {
                errors.push(
                    LoadErrorRecord::new(
                        "missing-param",
                        format!(
                            "creation start `{}` does not give `{name}`, which `{}` requires",
                            start.decl.id, start.decl.action
                        ),
                    )
                    .at(rules_path(pack))
                    .with("param", name)
                    .with("creation", start.decl.id.as_str())
                    .with("pack", pack),
                );
            }
        }
        ruleset.creation[i] = start;
    }
}

/// Qualifies each display group's `type` and each field hint's `field` in the declaring pack; a
/// hint's `group` must be a merged display group.
fn check_display(ruleset: &mut Ruleset, errors: &mut Vec<LoadErrorRecord>) {
    for i in 0..ruleset.display_groups.len() {
        let mut group = ruleset.display_groups.0[i].clone();
        qualify(ruleset, &mut group, |w, g| w.display_group(g), errors);
        ruleset.display_groups.0[i] = group;
    }
    for i in 0..ruleset.field_hints.len() {
        let mut hint = ruleset.field_hints.0[i].clone();
        qualify(ruleset, &mut hint, |w, h| w.field_hint(h), errors);
        if let Some(group) = &hint.decl.group
            && ruleset.display_groups.get(group).is_none()
        {
            errors.push(unknown_reference(
                &hint.pack,
                rules_path(&hint.pack),
                "display group",
                group,
            ));
        }
        ruleset.field_hints.0[i] = hint;
    }
    for i in 0..ruleset.odds_hints.len() {
        let mut hint = ruleset.odds_hints.0[i].clone();
        qualify(ruleset, &mut hint, |w, h| w.odds_hint(h), errors);
        ruleset.odds_hints.0[i] = hint;
    }
}

/// A slot whose pack is loaded declares only fields of that pack and its dependencies, same type.
fn check_links(ruleset: &mut Ruleset, errors: &mut Vec<LoadErrorRecord>) {
    let mut checks = Vec::new();
    for (id, slot) in ruleset.links.iter() {
        let Some(linked) = slot.decl.pack.as_ref().map(|p| p.as_str().to_owned()) else {
            continue;
        };
        if ruleset.pack(&linked).is_none() {
            continue;
        }
        for (field, decl) in slot.decl.fields.iter() {
            let found = ruleset.resolve(&linked, field, Namespace::Field);
            let same = found
                .as_ref()
                .and_then(|q| ruleset.fields.get(q))
                .is_some_and(|f| f.decl.r#type == decl.r#type);
            if !same {
                checks.push((
                    id.to_owned(),
                    field.to_owned(),
                    slot.pack.clone(),
                    linked.clone(),
                ));
            }
        }
    }
    for (link, field, pack, linked) in checks {
        errors.push(
            LoadErrorRecord::new(
                "link-field-mismatch",
                format!("link slot `{link}` declares `{field}`, not a field of `{linked}` or its dependencies with that type"),
            )
            .at(rules_path(&pack))
            .with("link", link)
            .with("field", field)
            .with("pack", pack),
        );
    }
}

/// Checks a follow-up's `create` offer and qualifies its `link` and `start`. `None` when it failed.
fn follow_up(
    ruleset: &Ruleset,
    pack: &str,
    f: &FollowUp,
    path: &str,
    errors: &mut Vec<LoadErrorRecord>,
) -> Option<FollowUp> {
    let mut f = f.clone();
    if f.create != Some(true) {
        return Some(f);
    }
    if f.r#while.is_none()
        || f.on.is_some()
        || f.becomes.is_some()
        || f.action.is_some()
        || !f.changes.is_empty()
        || f.to.is_some()
    {
        errors.push(
            LoadErrorRecord::new(
                "invalid-create-offer",
                format!("follow-up `{}` creates a character: it needs `while` and none of `on`, `becomes`, `action`, `changes`, `to`", f.id),
            )
            .at(path)
            .with("followUp", f.id.as_str())
            .with("pack", pack),
        );
        return None;
    }
    let link = match &f.link {
        Some(link) => match ruleset.resolve(pack, link.as_str(), Namespace::Link) {
            Some(q) => Some(q),
            None => {
                errors.push(unknown_reference(
                    pack,
                    path.to_owned(),
                    "link slot",
                    link.as_str(),
                ));
                return None;
            }
        },
        None => None,
    };
    if let Some(start) = &f.start {
        let (want_pack, want_id) = match start.as_str().split_once(':') {
            Some((p, id)) => (Some(p), id),
            None => (None, start.as_str()),
        };
        let found = ruleset
            .creation
            .iter()
            .find(|s| s.decl.id == want_id && want_pack.is_none_or(|p| p == s.pack));
        let Some(found) = found else {
            errors.push(unknown_reference(
                pack,
                path.to_owned(),
                "creation start",
                start.as_str(),
            ));
            return None;
        };
        if let Some(link) = &link
            && let Some(linked) = ruleset.links.get(link).and_then(|l| l.decl.pack.as_ref())
            && let Some(loaded) = ruleset.pack(linked.as_str())
            && !loaded.scope.contains(&found.pack)
        {
            errors.push(
                LoadErrorRecord::new(
                    "link-start-mismatch",
                    format!(
                        "start `{}` is not from `{linked}` or its dependencies",
                        start
                    ),
                )
                .at(path)
                .with("link", link.as_str())
                .with("start", start.as_str())
                .with("pack", pack),
            );
            return None;
        }
        f.start = Some(ocf_model::Id(format!("{}:{}", found.pack, found.decl.id)));
    }
    f.link = link.map(ocf_model::Id);
    Some(f)
}
