//! Step 3, resolve content: every item keyed by qualified ID, `extends` and `override` applied,
//! `hides` marked, references qualified, choice tags and `members` checked.

use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

use ocf_model::{
    ChoiceOptions, ChoiceSource, Conflict, ContentEntry, ContentItem, EffectValue, GrantValue, Id,
    Namespace, PackRelease, Ruleset, Step, Tag, Target,
};
use serde_json::{Map, Value};

use super::walk::Qualify;
use super::{LoadOptions, done};
use crate::error::{LoadErrorRecord, content_path, rules_path};

/// Where an item was written.
struct Written<'a> {
    pack: &'a str,
    index: usize,
    item: &'a ContentItem,
}

pub fn resolve(
    ruleset: &mut Ruleset,
    releases: &[PackRelease],
    options: &LoadOptions,
) -> Result<(), Vec<LoadErrorRecord>> {
    let mut errors = Vec::new();
    // Declared items by qualified ID (not yet resolved), and the overrides in load order.
    let mut declared: Vec<(String, Written)> = Vec::new();
    let mut overrides = Vec::new();
    for release in releases {
        let pack = release.id.as_str();
        for (index, item) in release.content.iter().enumerate() {
            let written = Written { pack, index, item };
            match (&item.id, &item.r#override) {
                (_, Some(_)) => overrides.push(written),
                (Some(id), None) => declared.push((format!("{pack}:{id}"), written)),
                (None, None) => errors.push(
                    LoadErrorRecord::new("unknown-reference", "a content item needs an `id`")
                        .at(content_path(pack, index))
                        .with("pack", pack),
                ),
            }
        }
    }
    // Found by ID in constant time: `extends` chains and hides look items up once per item.
    let by_id: FxHashMap<&str, &Written> = declared.iter().map(|(q, w)| (q.as_str(), w)).collect();
    // Entries first, so references can resolve against every ID; extends applied below.
    for (qualified, w) in &declared {
        ruleset.content.0.insert(
            qualified.clone(),
            ContentEntry {
                pack: w.pack.to_owned(),
                hidden: false,
                origins: BTreeMap::new(),
                tag_options: BTreeMap::new(),
                item: w.item.clone(),
            },
        );
    }
    for (qualified, w) in &declared {
        let mut chain = Vec::new();
        match extend(ruleset, qualified, &by_id, options, &mut chain) {
            Ok(Some((item, origins))) => {
                let entry = ruleset
                    .content
                    .0
                    .get_mut(qualified)
                    .expect("inserted above");
                entry.item = item;
                entry.origins = origins;
            }
            Ok(None) => {}
            Err(error) => errors.push(error.at(content_path(w.pack, w.index))),
        }
    }
    done(std::mem::take(&mut errors))?;

    let mut overridden: BTreeMap<(String, String), String> = BTreeMap::new();
    for w in &overrides {
        let target_ref = w
            .item
            .r#override
            .as_ref()
            .map(Id::as_str)
            .unwrap_or_default();
        let Some(target) = ruleset.resolve(w.pack, target_ref, Namespace::Content) else {
            errors.push(unknown(w.pack, content_path(w.pack, w.index), target_ref));
            continue;
        };
        let mut patch = w.item.clone();
        patch.r#override = None;
        patch.id = None;
        let entry = ruleset.content.0.get_mut(&target).expect("resolved");
        let (merged, leaves) = merge_items(&entry.item, &patch);
        for leaf in leaves {
            let key = (target.clone(), leaf.clone());
            if let Some(earlier) = overridden.get(&key)
                && earlier != w.pack
            {
                ruleset.conflicts.push(Conflict::Override {
                    item: target.clone(),
                    property: leaf.clone(),
                    packs: [earlier.clone(), w.pack.to_owned()],
                });
            }
            let top = leaf.split('.').next().unwrap_or_default().to_owned();
            overridden.insert(key, w.pack.to_owned());
            entry.origins.insert(top, w.pack.to_owned());
        }
        match merged {
            Some(item) => entry.item = item,
            // Unreachable with valid items (each key's value comes from a valid item, objects
            // merge valid entries), but the code is not the spec's: see decisions.md, "Loading".
            None => errors.push(
                LoadErrorRecord::new(
                    "invalid-content",
                    format!("the override of `{target}` does not make a valid item"),
                )
                .at(content_path(w.pack, w.index))
                .with("item", target.as_str())
                .with("pack", w.pack),
            ),
        }
    }
    // Hides, from declared items and overrides alike.
    let mut hidden = Vec::new();
    for (qualified, _) in &declared {
        let entry = &ruleset.content.0[qualified];
        let pack = entry.pack_of("hides").to_owned();
        for h in &entry.item.hides {
            match ruleset.resolve(&pack, h.as_str(), Namespace::Content) {
                Some(q) => hidden.push(q),
                None => {
                    let index = by_id.get(qualified.as_str()).map_or(0, |w| w.index);
                    errors.push(unknown(&pack, content_path(&entry.pack, index), h.as_str()));
                }
            }
        }
    }
    for q in hidden {
        if let Some(entry) = ruleset.content.0.get_mut(&q) {
            entry.hidden = true;
        }
    }
    // Qualify references, check tags.
    let ids: Vec<String> = declared.iter().map(|(q, _)| q.clone()).collect();
    for (qualified, w) in declared.iter() {
        let mut entry = ruleset.content.0[qualified].clone();
        let path = content_path(&entry.pack, w.index);
        qualify_item(ruleset, &mut entry, qualified, &path, &mut errors);
        ruleset.content.0.insert(qualified.clone(), entry);
    }
    let _ = ids;
    qualify_rules(ruleset, releases, &mut errors);
    done(errors)
}

fn unknown(pack: &str, path: String, id: &str) -> LoadErrorRecord {
    LoadErrorRecord::new(
        "unknown-reference",
        format!("`{id}` in pack `{pack}` names nothing"),
    )
    .at(path)
    .with("id", id)
    .with("pack", pack)
}

type Origins = BTreeMap<String, String>;

/// The item `qualified` with its `extends` chain applied, and which pack wrote each inherited
/// property; `None` when it extends nothing.
fn extend(
    ruleset: &Ruleset,
    qualified: &str,
    declared: &FxHashMap<&str, &Written>,
    options: &LoadOptions,
    chain: &mut Vec<String>,
) -> Result<Option<(ContentItem, Origins)>, Box<LoadErrorRecord>> {
    let Some(w) = declared.get(qualified) else {
        return Ok(None);
    };
    let Some(parent_ref) = &w.item.extends else {
        return Ok(None);
    };
    if chain.iter().any(|c| c == qualified) {
        chain.push(qualified.to_owned());
        return Err(Box::new(
            LoadErrorRecord::new(
                "circular-extends",
                format!("`extends` loops: {}", chain.join(" -> ")),
            )
            .with("items", chain.clone()),
        ));
    }
    if chain.len() >= options.max_extends_depth {
        return Err(Box::new(
            LoadErrorRecord::new(
                "safety-limit-exceeded",
                format!(
                    "`extends` chain of `{}` is longer than maxExtendsDepth",
                    chain[0]
                ),
            )
            .with("limit", "maxExtendsDepth")
            .with("maxExtendsDepth", options.max_extends_depth),
        ));
    }
    chain.push(qualified.to_owned());
    let Some(parent) = ruleset.resolve(w.pack, parent_ref.as_str(), Namespace::Content) else {
        return Err(Box::new(unknown(
            w.pack,
            String::new(),
            parent_ref.as_str(),
        )));
    };
    let parent_pack = ruleset.content.0[parent.as_str()].pack.clone();
    let (base, mut origins) = match extend(ruleset, &parent, declared, options, chain)? {
        Some(resolved) => resolved,
        None => (
            ruleset.content.0[parent.as_str()].item.clone(),
            Origins::new(),
        ),
    };
    let mut own = w.item.clone();
    own.extends = None;
    let (merged, leaves) = merge_items(&base, &own);
    let mut item = merged.unwrap_or(own);
    item.extends = Some(Id(parent));
    item.id = w.item.id.clone();
    // What the child didn't write came from the parent (or further up).
    let written: Vec<String> = leaves
        .iter()
        .map(|l| l.split('.').next().unwrap_or_default().to_owned())
        .collect();
    let base_json = serde_json::to_value(&base).unwrap_or_default();
    if let Value::Object(map) = base_json {
        for key in map.keys() {
            if !written.contains(key) && key != "id" {
                origins
                    .entry(key.clone())
                    .or_insert_with(|| parent_pack.clone());
            }
        }
    }
    for key in written {
        origins.remove(&key);
    }
    if w.pack == parent_pack {
        origins.retain(|_, p| p != w.pack);
    }
    Ok(Some((item, origins)))
}

/// `patch` merged over `base`: scalars replaced, objects key by key (each entry whole), arrays
/// replaced whole (EC). Also the dotted leaves `patch` wrote (`tags`, `fields.damage`).
fn merge_items(base: &ContentItem, patch: &ContentItem) -> (Option<ContentItem>, Vec<String>) {
    let mut base = match serde_json::to_value(base) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let patch = match serde_json::to_value(patch) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut leaves = Vec::new();
    for (key, value) in patch {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(into)), Value::Object(from)) => {
                for (k, v) in from {
                    leaves.push(format!("{key}.{k}"));
                    into.insert(k, v);
                }
            }
            (_, value) => {
                leaves.push(key.clone());
                base.insert(key, value);
            }
        }
    }
    (serde_json::from_value(Value::Object(base)).ok(), leaves)
}

/// Qualifies the references of one item and checks its choice tags and members.
fn qualify_item(
    ruleset: &Ruleset,
    entry: &mut ContentEntry,
    qualified: &str,
    path: &str,
    errors: &mut Vec<LoadErrorRecord>,
) {
    let pack = entry.pack.clone();
    let at = |property: &str| {
        entry
            .origins
            .get(property)
            .cloned()
            .unwrap_or_else(|| pack.clone())
    };
    let item = &mut entry.item;
    item.id = Some(Id(qualified.to_owned()));
    let q = |p: &str, id: &mut Id, ns: Namespace, errors: &mut Vec<LoadErrorRecord>| match ruleset
        .resolve(p, id.as_str(), ns)
    {
        Some(found) => *id = Id(found),
        None => errors.push(unknown(p, path.to_owned(), id.as_str())),
    };
    match &mut item.r#type {
        Some(t) => q(&at("type"), t, Namespace::ContentType, errors),
        None => errors.push(
            LoadErrorRecord::new(
                "unknown-reference",
                format!("content item `{qualified}` has no `type`"),
            )
            .at(path)
            .with("id", qualified)
            .with("pack", pack.as_str()),
        ),
    }
    let hides_pack = at("hides");
    for h in &mut item.hides {
        q(&hides_pack, h, Namespace::Content, errors);
    }
    let grants_pack = at("grants");
    for g in &mut item.grants {
        q(&grants_pack, &mut g.item, Namespace::Content, errors);
    }
    let effects_pack = at("effects");
    for e in &mut item.effects {
        if let Target::Field(f) = &mut e.target {
            q(&effects_pack, f, Namespace::Field, errors);
        }
        if let Target::Choices { choices, .. } = &e.target {
            for tag in choices {
                check_tag(ruleset, &effects_pack, tag, path, errors);
            }
        }
        match &mut e.value {
            Some(EffectValue::Grant(GrantValue::Item { item })) => {
                q(&effects_pack, item, Namespace::Content, errors)
            }
            Some(EffectValue::Grant(GrantValue::Field { field })) => {
                q(&effects_pack, field, Namespace::Field, errors)
            }
            Some(EffectValue::Grant(GrantValue::Query { query })) => q(
                &effects_pack,
                &mut query.r#type,
                Namespace::ContentType,
                errors,
            ),
            _ => {}
        }
    }
    let choices_pack = at("choices");
    qualify_choices(ruleset, &choices_pack, &mut item.choices, path, errors);
    let sc_pack = at("standardCopies");
    for s in &mut item.standard_copies {
        q(&sc_pack, &mut s.r#type, Namespace::ContentType, errors);
    }
    let imm_pack = at("immuneTo");
    for i in &mut item.immune_to {
        for id in &mut i.items {
            q(&imm_pack, id, Namespace::Content, errors);
        }
        if let Some(query) = &mut i.query {
            q(&imm_pack, &mut query.r#type, Namespace::ContentType, errors);
        }
    }
    let kt_pack = at("keepsTemplates");
    for k in &mut item.keeps_templates {
        q(&kt_pack, &mut k.template, Namespace::Content, errors);
        q(
            &kt_pack,
            &mut k.copies.r#type,
            Namespace::ContentType,
            errors,
        );
    }
    let actions_pack = at("actions");
    for a in &mut item.actions {
        if let Some(u) = &mut a.r#use {
            q(&actions_pack, u, Namespace::Action, errors);
        }
        check_steps(ruleset, &actions_pack, &a.steps, path, errors);
    }
    // Choice-step types, destinations and changes sent to links, each in the pack that wrote it.
    for (property, pack) in [
        ("actions", at("actions")),
        ("effects", at("effects")),
        ("choices", at("choices")),
        ("followUps", at("followUps")),
    ] {
        let mut walk = Qualify {
            ruleset,
            pack: &pack,
            path,
            errors,
        };
        match property {
            "actions" => walk.actions(&mut item.actions),
            "effects" => walk.effects(&mut item.effects),
            "choices" => walk.choices(&mut item.choices),
            _ => walk.follow_ups(&mut item.follow_ups),
        }
    }
    for (i, a) in item.actions.iter_mut().enumerate() {
        let options = params(ruleset, &actions_pack, a, path, errors);
        for (name, tags) in options {
            entry
                .tag_options
                .insert(format!("/actions/{i}/params/{name}"), tags);
        }
    }
    let state_pack = at("state");
    for (_, decl) in item.state.0.iter_mut() {
        qualify_of(ruleset, &state_pack, &mut decl.of, path, errors);
    }
    for (key, decl) in item.state.iter() {
        if !decl.members.is_empty() {
            check_members(ruleset, &state_pack, &decl.members, path, errors);
            entry
                .tag_options
                .insert(format!("/state/{key}"), ruleset.tag_options(&decl.members));
        }
    }
}

fn qualify_choices(
    ruleset: &Ruleset,
    pack: &str,
    choices: &mut [ocf_model::Choice],
    path: &str,
    errors: &mut Vec<LoadErrorRecord>,
) {
    for choice in choices {
        match &mut choice.options {
            ChoiceOptions::Source(ChoiceSource::Content { content }) => {
                match ruleset.resolve(pack, content.r#type.as_str(), Namespace::ContentType) {
                    Some(found) => content.r#type = Id(found),
                    None => errors.push(unknown(pack, path.to_owned(), content.r#type.as_str())),
                }
            }
            ChoiceOptions::Inline(options) => {
                for option in options {
                    for g in &mut option.grants {
                        match ruleset.resolve(pack, g.item.as_str(), Namespace::Content) {
                            Some(found) => g.item = Id(found),
                            None => errors.push(unknown(pack, path.to_owned(), g.item.as_str())),
                        }
                    }
                    qualify_choices(ruleset, pack, &mut option.choices, path, errors);
                }
            }
            _ => {}
        }
    }
}

/// A choice step's static tags must be declared by the pack or its dependencies.
fn check_steps(
    ruleset: &Ruleset,
    pack: &str,
    steps: &[Step],
    path: &str,
    errors: &mut Vec<LoadErrorRecord>,
) {
    for step in steps {
        if step.kind == ocf_model::StepKind::Choice {
            for tag in &step.tags {
                if let ocf_model::Computed::Literal(tag) = tag {
                    check_tag(ruleset, pack, tag, path, errors);
                }
            }
        }
        for case in &step.cases {
            check_steps(ruleset, pack, &case.steps, path, errors);
        }
        if let Some(otherwise) = &step.r#else {
            check_steps(ruleset, pack, &otherwise.steps, path, errors);
        }
    }
}

/// Qualifies an `of` naming a content type (`field` stays as it is), as written in `pack`.
fn qualify_of(
    ruleset: &Ruleset,
    pack: &str,
    of: &mut Option<Id>,
    path: &str,
    errors: &mut Vec<LoadErrorRecord>,
) {
    let Some(of) = of else { return };
    if of.as_str() == "field" {
        return;
    }
    match ruleset.resolve(pack, of.as_str(), Namespace::ContentType) {
        Some(found) => *of = Id(found),
        None => errors.push(unknown(pack, path.to_owned(), of.as_str())),
    }
}

/// An action's declared parameters: each `of` qualified, `members` checked. Gives the tag options
/// of each parameter with `members`, by name.
fn params(
    ruleset: &Ruleset,
    pack: &str,
    action: &mut ocf_model::Action,
    path: &str,
    errors: &mut Vec<LoadErrorRecord>,
) -> Vec<(String, Vec<Tag>)> {
    let mut options = Vec::new();
    for (name, param) in action.params.0.iter_mut() {
        let ocf_model::ParamEntry::Declared(decl) = param else {
            continue;
        };
        qualify_of(ruleset, pack, &mut decl.of, path, errors);
        if !decl.members.is_empty() {
            check_members(ruleset, pack, &decl.members, path, errors);
            options.push((name.clone(), ruleset.tag_options(&decl.members)));
        }
    }
    options
}

/// The tags `pack` and its dependencies declare, with the tags above each.
fn declared_tags(ruleset: &Ruleset, pack: &str) -> Vec<Tag> {
    let mut tags = Vec::new();
    let scope = ruleset
        .pack(pack)
        .map(|p| p.scope.clone())
        .unwrap_or_default();
    for release in &ruleset.sources {
        if scope.iter().any(|s| s == release.id.as_str()) {
            for tag in &release.rules.tags {
                super::merge::add_tag(&mut tags, tag);
            }
        }
    }
    tags
}

fn check_tag(
    ruleset: &Ruleset,
    pack: &str,
    tag: &Tag,
    path: &str,
    errors: &mut Vec<LoadErrorRecord>,
) {
    if !declared_tags(ruleset, pack).contains(tag) {
        errors.push(
            LoadErrorRecord::new(
                "unknown-tag",
                format!("tag `{tag}` is not declared by `{pack}` or its dependencies"),
            )
            .at(path)
            .with("tag", tag.as_str())
            .with("pack", pack),
        );
    }
}

fn check_members(
    ruleset: &Ruleset,
    pack: &str,
    members: &[Tag],
    path: &str,
    errors: &mut Vec<LoadErrorRecord>,
) {
    for tag in members {
        check_tag(ruleset, pack, tag, path, errors);
    }
}

/// The rules' references: field and type `of`s, members, rules actions' steps, rules choices,
/// standard copies and immunities.
fn qualify_rules(
    ruleset: &mut Ruleset,
    releases: &[PackRelease],
    errors: &mut Vec<LoadErrorRecord>,
) {
    let snapshot = ruleset.clone();
    for release in releases {
        let pack = release.id.as_str();
        let path = rules_path(pack);
        for (id, field) in release.rules.fields.iter() {
            if !field.members.is_empty() {
                check_members(&snapshot, pack, &field.members, &path, errors);
                if let Some(d) = ruleset.fields.0.get_mut(&format!("{pack}:{id}")) {
                    d.tag_options
                        .insert(String::new(), snapshot.tag_options(&field.members));
                }
            }
        }
        for (name, t) in release.rules.content_types.iter() {
            let key = format!("{pack}:{name}");
            for (f, decl) in t.fields.iter() {
                if !decl.members.is_empty() {
                    check_members(&snapshot, pack, &decl.members, &path, errors);
                    if let Some(d) = ruleset.content_types.0.get_mut(&key) {
                        d.tag_options
                            .insert(format!("/fields/{f}"), snapshot.tag_options(&decl.members));
                    }
                }
            }
            for (s, decl) in t.state.iter() {
                if !decl.members.is_empty() {
                    check_members(&snapshot, pack, &decl.members, &path, errors);
                    if let Some(d) = ruleset.content_types.0.get_mut(&key) {
                        d.tag_options
                            .insert(format!("/state/{s}"), snapshot.tag_options(&decl.members));
                    }
                }
            }
            for a in &t.actions {
                check_steps(&snapshot, pack, &a.steps, &path, errors);
            }
        }
        for (name, decl) in release.rules.template_fields.iter() {
            if !decl.members.is_empty() {
                check_members(&snapshot, pack, &decl.members, &path, errors);
                if let Some(d) = ruleset.template_fields.0.get_mut(name) {
                    d.tag_options
                        .insert(String::new(), snapshot.tag_options(&decl.members));
                }
            }
        }
        for a in &release.rules.actions {
            check_steps(&snapshot, pack, &a.steps, &path, errors);
        }
        for e in &release.rules.effects {
            if let Target::Choices { choices, .. } = &e.target {
                for tag in choices {
                    check_tag(&snapshot, pack, tag, &path, errors);
                }
            }
        }
    }
    for c in ruleset.choices.0.values_mut() {
        let pack = c.pack.clone();
        qualify_choices(
            &snapshot,
            &pack,
            std::slice::from_mut(&mut c.decl),
            &rules_path(&pack),
            errors,
        );
    }
    qualify_rules_walk(ruleset, &snapshot, errors);
    qualify_rules_of(ruleset, &snapshot, errors);
    for s in ruleset.standard_copies.iter_mut() {
        match snapshot.resolve(&s.pack, s.decl.r#type.as_str(), Namespace::ContentType) {
            Some(found) => s.decl.r#type = Id(found),
            None => errors.push(unknown(
                &s.pack,
                rules_path(&s.pack),
                s.decl.r#type.as_str(),
            )),
        }
    }
    for e in ruleset.effects.iter_mut() {
        if let Target::Field(f) = &mut e.decl.target {
            match snapshot.resolve(&e.pack, f.as_str(), Namespace::Field) {
                Some(found) => *f = Id(found),
                None => errors.push(unknown(&e.pack, rules_path(&e.pack), f.as_str())),
            }
        }
    }
}

/// The rules' actions, effects, choices and follow-ups, and the content types' (see [`Qualify`]).
fn qualify_rules_walk(
    ruleset: &mut Ruleset,
    snapshot: &Ruleset,
    errors: &mut Vec<LoadErrorRecord>,
) {
    fn walk<'a>(
        snapshot: &'a Ruleset,
        pack: &'a str,
        path: &'a str,
        errors: &'a mut Vec<LoadErrorRecord>,
    ) -> Qualify<'a> {
        Qualify {
            ruleset: snapshot,
            pack,
            path,
            errors,
        }
    }
    for a in ruleset.actions.0.values_mut() {
        let path = rules_path(&a.pack);
        walk(snapshot, &a.pack, &path, errors).actions(std::slice::from_mut(&mut a.decl));
    }
    for t in ruleset.content_types.0.values_mut() {
        let path = rules_path(&t.pack);
        let mut w = walk(snapshot, &t.pack, &path, errors);
        w.actions(&mut t.decl.actions);
        w.effects(&mut t.decl.effects);
        w.follow_ups(&mut t.decl.follow_ups);
    }
    for e in ruleset.effects.iter_mut() {
        let path = rules_path(&e.pack);
        walk(snapshot, &e.pack, &path, errors).effects(std::slice::from_mut(&mut e.decl));
    }
    for s in ruleset.situational.0.values_mut() {
        let path = rules_path(&s.pack);
        walk(snapshot, &s.pack, &path, errors).effects(&mut s.decl.effects);
    }
    for c in ruleset.choices.0.values_mut() {
        let path = rules_path(&c.pack);
        walk(snapshot, &c.pack, &path, errors).choices(std::slice::from_mut(&mut c.decl));
    }
    for f in ruleset.follow_ups.0.values_mut() {
        let path = rules_path(&f.pack);
        walk(snapshot, &f.pack, &path, errors).follow_ups(std::slice::from_mut(&mut f.decl));
    }
}

/// The `of`s of the rules' fields, content types' fields and state, template fields and action
/// parameters; the parameters' `members` and their tag options.
fn qualify_rules_of(ruleset: &mut Ruleset, snapshot: &Ruleset, errors: &mut Vec<LoadErrorRecord>) {
    for f in ruleset.fields.0.values_mut() {
        qualify_of(
            snapshot,
            &f.pack,
            &mut f.decl.of,
            &rules_path(&f.pack),
            errors,
        );
    }
    for f in ruleset.template_fields.0.values_mut() {
        qualify_of(
            snapshot,
            &f.pack,
            &mut f.decl.of,
            &rules_path(&f.pack),
            errors,
        );
    }
    for t in ruleset.content_types.0.values_mut() {
        let path = rules_path(&t.pack);
        for decl in t.decl.fields.0.values_mut() {
            qualify_of(snapshot, &t.pack, &mut decl.of, &path, errors);
        }
        for decl in t.decl.state.0.values_mut() {
            qualify_of(snapshot, &t.pack, &mut decl.of, &path, errors);
        }
        for (i, a) in t.decl.actions.iter_mut().enumerate() {
            for (name, tags) in params(snapshot, &t.pack, a, &path, errors) {
                t.tag_options
                    .insert(format!("/actions/{i}/params/{name}"), tags);
            }
        }
    }
    for a in ruleset.actions.0.values_mut() {
        let path = rules_path(&a.pack);
        for (name, tags) in params(snapshot, &a.pack, &mut a.decl, &path, errors) {
            a.tag_options.insert(format!("/params/{name}"), tags);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An override merges two valid items key by key (objects one level deeper), so the result
    /// always reads back: `invalid-content` guards a case valid input can't reach. Pairs of the
    /// sample packs' items, one overriding the other, read back.
    #[test]
    fn every_override_of_valid_items_reads_back() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/packs");
        let items: Vec<ContentItem> = ["5e-srd-5.1", "fitd-scoundrel"]
            .iter()
            .flat_map(|pack| crate::source::read_pack(&dir.join(pack)).unwrap().content)
            .collect();
        assert!(items.len() > 50);
        for base in &items {
            // Every other item as the override: the shapes repeat, the time does not need to.
            for patch in items.iter().step_by(2) {
                let (merged, _) = merge_items(base, patch);
                assert!(merged.is_some(), "{:?} over {:?}", patch.id, base.id);
            }
        }
    }
}
