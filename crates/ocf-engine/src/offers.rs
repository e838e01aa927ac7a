//! computeSheet's `offers` (decisions.md, "Offers"; the section of engine-core.md that defined
//! them is lost). Two kinds, as engine-actions.md has them:
//!
//! - **derived** offers: each follow-up with a `while` (and no `on` or `becomes` trigger) of the
//!   rules and of the active content and its content type, while its `while` holds. The rules'
//!   come first, then the content's in activation order (per activation the type's, the item's,
//!   then its templates'), each list in written order;
//! - **ephemeral** offers: the character's stored `followUps` (what `offerFollowUp` stored), after
//!   the derived ones, in stored order.
//!
//! Each offer's `action` is what startAction takes as its `action`, `followUp` included.

use ocf_formula::Value;
use ocf_model::{Action, ContentEntry, FollowUp, Ruleset, StoredOffer};
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Map, Value as Json, json};

use crate::report::{action_id, listing_source, resolve_action};

use crate::context::{Bindings, Mode, SheetContext};
/// Declared in the query map ([`crate::db`]); kept here for the crates above.
pub use crate::db::{Activation, Via, offers};
use crate::db::{CharacterInput, activations};
use crate::db::{Source, SourceKind};

/// Whether an offer holds while a condition does, or was stored by `offerFollowUp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfferKind {
    Derived,
    Ephemeral,
}

impl OfferKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OfferKind::Derived => "derived",
            OfferKind::Ephemeral => "ephemeral",
        }
    }
}

/// One offer.
#[derive(Debug, Clone, PartialEq)]
pub struct Offer {
    /// What startAction's `action.followUp` takes: the qualified follow-up ID for a derived offer,
    /// the stored entry's `id` for an ephemeral one.
    pub id: String,
    pub kind: OfferKind,
    /// The qualified follow-up: `<content>#<id>`, `<pack>:<type>#<id>` or `<pack>:<id>`.
    pub follow_up: String,
    /// The action startAction runs, named as computeSheet's `actions` names it.
    pub action: String,
    pub entry: Option<String>,
    pub action_source: Option<String>,
    /// Where the follow-up comes from, as breakdowns and issues name sources.
    pub source: Source,
    /// The parameters, evaluated (derived) or as stored (ephemeral); a `null` is left out.
    pub params: Vec<(String, Json)>,
    /// A `create` offer's qualified link slot and creation start.
    pub create: Option<(String, String)>,
}

impl Offer {
    pub fn to_json(&self) -> Json {
        let mut action = Map::new();
        action.insert("id".into(), self.action.clone().into());
        if let Some(entry) = &self.entry {
            action.insert("entry".into(), entry.clone().into());
        }
        if let Some(source) = &self.action_source {
            action.insert("source".into(), source.clone().into());
        }
        action.insert("followUp".into(), self.id.clone().into());
        let mut m = Map::new();
        m.insert("id".into(), self.id.clone().into());
        m.insert("kind".into(), self.kind.as_str().into());
        m.insert("followUp".into(), self.follow_up.clone().into());
        m.insert("action".into(), Json::Object(action));
        m.insert("source".into(), self.source.to_json());
        if !self.params.is_empty() {
            m.insert(
                "params".into(),
                Json::Object(self.params.iter().cloned().collect()),
            );
        }
        if let Some((link, start)) = &self.create {
            m.insert("create".into(), json!({ "link": link, "start": start }));
        }
        Json::Object(m)
    }
}

/// The offers, and the errors met finding them (a failing `while`, a stale stored offer).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Offers {
    pub list: Vec<Offer>,
    pub errors: Vec<Json>,
    /// `(id, entry, source)` of each derived offer listed: each is listed once, as actions are.
    seen: FxHashSet<(String, Option<String>, Option<String>)>,
}

/// The character's offers: derived ones over the activations, then the stored ones.
pub(crate) fn offers_query(db: &dyn salsa::Database, character: CharacterInput) -> Offers {
    let ruleset = character.ruleset(db).ruleset(db);
    let acts = activations(db, character);
    let mut out = Offers::default();
    for (id, f) in ruleset.follow_ups.iter() {
        let declared = Declaration {
            follow_up: &f.decl,
            id: id.to_owned(),
            pack: &f.pack,
            owner: None,
        };
        out.derive(db, character, &declared, None);
    }
    for a in &acts.list {
        // A template's follow-ups are offered with its copy's activation, as its actions are.
        if a.via == Via::Template {
            continue;
        }
        for declared in declarations(ruleset, a) {
            out.derive(db, character, &declared, Some(a));
        }
    }
    // Each content's first activation, for the stored offers' sources.
    let mut first: FxHashMap<&str, &Activation> = FxHashMap::default();
    for a in &acts.list {
        first.entry(&*a.item).or_insert(a);
    }
    for (i, stored) in character.follow_ups(db).iter().enumerate() {
        out.stored(ruleset, &first, i, stored);
    }
    out
}

/// A follow-up where it is declared: its qualified ID, the pack its formulas and `action` resolve
/// in, and the content whose inline actions its `action` may name.
pub(crate) struct Declaration<'a> {
    pub(crate) follow_up: &'a FollowUp,
    pub(crate) id: String,
    pub(crate) pack: &'a str,
    /// `(inline actions, their pack, the content they are listed under)`.
    owner: Option<(&'a [Action], &'a str, &'a str)>,
}

/// The follow-ups an activation offers, in order: its content type's, its item's, then (for a
/// copy) its templates'.
pub(crate) fn declarations<'a>(ruleset: &'a Ruleset, a: &'a Activation) -> Vec<Declaration<'a>> {
    let mut out = Vec::new();
    let Some(entry) = ruleset.item(&a.item) else {
        return out;
    };
    if let Some((name, t)) = entry
        .type_name()
        .and_then(|name| Some((name, ruleset.content_type(name)?)))
    {
        for f in &t.decl.follow_ups {
            out.push(Declaration {
                follow_up: f,
                id: format!("{name}#{}", f.id),
                pack: &t.pack,
                owner: Some((&t.decl.actions, &t.pack, &a.item)),
            });
        }
    }
    let mut content = |e: &'a ContentEntry, id: &'a str| {
        for f in &e.item.follow_ups {
            out.push(Declaration {
                follow_up: f,
                id: format!("{id}#{}", f.id),
                pack: e.pack_of("followUps"),
                owner: Some((&e.item.actions, e.pack_of("actions"), id)),
            });
        }
    };
    content(entry, &a.item);
    if a.via == Via::Copy {
        for template in a.templates.iter() {
            if let Some(t) = ruleset.item(template) {
                content(t, template);
            }
        }
    }
    out
}

impl Offers {
    /// Adds the derived offer of `d` on activation `a` (the rules' when `None`) if its `while`
    /// holds. A follow-up without `while`, or with a trigger (`on`, `becomes`), is offered only
    /// once stored.
    fn derive(
        &mut self,
        db: &dyn salsa::Database,
        character: CharacterInput,
        d: &Declaration<'_>,
        a: Option<&Activation>,
    ) {
        let f = d.follow_up;
        let Some(condition) = &f.r#while else {
            return;
        };
        if f.on.is_some() || f.becomes.is_some() {
            return;
        }
        let ruleset = character.ruleset(db).ruleset(db);
        let entry = a.and_then(|a| a.entry.as_deref().map(str::to_owned));
        let action_source = a.and_then(listing_source);
        // Listed (and its formulas evaluated, its errors reported) once per (id, entry, source).
        if !self
            .seen
            .insert((d.id.clone(), entry.clone(), action_source.clone()))
        {
            return;
        }
        let bindings = match a {
            None => Bindings::rules(d.pack),
            Some(a) => follow_up_bindings(db, character, d.pack, a),
        };
        let ctx = SheetContext::new(db, character, Mode::Sheet, bindings);
        let evaluate = |formula: &ocf_model::Formula| ctx.evaluate(formula.as_str());
        let mut fail = |property: String, cause: &str| {
            let mut data = Map::new();
            data.insert("followUp".into(), d.id.clone().into());
            if let Some(entry) = &entry {
                data.insert("entry".into(), entry.clone().into());
            }
            data.insert("property".into(), property.into());
            data.insert("cause".into(), cause.into());
            self.errors
                .push(json!({ "code": "formula-error", "data": data }));
        };
        match evaluate(condition) {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => return,
            Ok(_) => return fail("while".into(), "type-mismatch"),
            Err(e) => return fail("while".into(), e.code.as_str()),
        }
        let mut params = Vec::new();
        for (name, formula) in f.params.iter() {
            match evaluate(formula) {
                Ok(Value::Null) => {}
                Ok(value) => params.push((name.to_owned(), value.to_json())),
                Err(e) => return fail(format!("params.{name}"), e.code.as_str()),
            }
        }
        let offer = Offer {
            id: d.id.clone(),
            kind: OfferKind::Derived,
            follow_up: d.id.clone(),
            action: action_of(ruleset, d),
            entry,
            action_source,
            source: match a {
                Some(a) => crate::report::activation_source(a),
                None => Source {
                    kind: SourceKind::Rules,
                    id: d.pack.to_owned(),
                    entry: None,
                },
            },
            params,
            create: create_of(f),
        };
        self.list.push(offer);
    }

    /// Adds stored offer `i`. One whose follow-up or source names nothing, or whose follow-up is
    /// derived, is left out with `unknown-reference`; one whose source isn't active is left out.
    fn stored(
        &mut self,
        ruleset: &Ruleset,
        first: &FxHashMap<&str, &Activation>,
        i: usize,
        stored: &StoredOffer,
    ) {
        let follow_up = stored.follow_up.as_str();
        let Some(found) = find_follow_up(
            ruleset,
            follow_up,
            stored.source.as_ref().map(|s| s.as_str()),
        )
        .filter(|d| d.follow_up.r#while.is_none()) else {
            self.errors.push(json!({
                "code": "unknown-reference",
                "path": format!("/followUps/{i}/followUp"),
                "data": { "followUp": follow_up },
            }));
            return;
        };
        let activation = match &stored.source {
            None => None,
            Some(source) if ruleset.item(source.as_str()).is_none() => {
                self.errors.push(json!({
                    "code": "unknown-reference",
                    "path": format!("/followUps/{i}/source"),
                    "data": { "id": source.as_str() },
                }));
                return;
            }
            Some(source) => match first.get(source.as_str()) {
                Some(a) => Some(*a),
                None => return,
            },
        };
        let source = match (&stored.source, found.owner) {
            (Some(source), _) => Source {
                kind: SourceKind::Item,
                id: source.to_string(),
                entry: activation.and_then(|a| a.entry.as_deref().map(str::to_owned)),
            },
            (None, Some((_, _, owner))) => Source {
                kind: SourceKind::Item,
                id: owner.to_owned(),
                entry: None,
            },
            (None, None) => Source {
                kind: SourceKind::Rules,
                id: found.pack.to_owned(),
                entry: None,
            },
        };
        self.list.push(Offer {
            id: stored.id.clone(),
            kind: OfferKind::Ephemeral,
            follow_up: follow_up.to_owned(),
            action: action_of(ruleset, &found),
            entry: activation.and_then(|a| a.entry.as_deref().map(str::to_owned)),
            action_source: activation.and_then(listing_source),
            source,
            params: stored
                .params
                .iter()
                .filter_map(|(k, v)| {
                    let v = serde_json::to_value(v).ok()?;
                    (!v.is_null()).then(|| (k.to_owned(), v))
                })
                .collect(),
            create: create_of(found.follow_up),
        });
    }
}

/// What a follow-up's formulas see on activation `a` ([`Bindings::with_computed`]).
fn follow_up_bindings<'db>(
    db: &'db dyn salsa::Database,
    character: CharacterInput,
    pack: &'db str,
    a: &Activation,
) -> Bindings<'db> {
    Bindings::with_computed(db, character, pack, a)
}

/// The action an offer runs, as computeSheet's `actions` lists it: the owner's inline action the
/// follow-up's `action` names (`<content>#<id>`, or the used action's ID), else the rules action it
/// names in the follow-up's pack; a `create` offer's start's action; a follow-up without `action`
/// (one that proposes `changes`) runs as itself, so its ID is the follow-up's.
fn action_of(ruleset: &Ruleset, d: &Declaration<'_>) -> String {
    let f = d.follow_up;
    if f.create == Some(true) {
        let start = f.start.as_ref().map(|s| s.as_str()).unwrap_or_default();
        return ruleset
            .creation
            .iter()
            .find(|s| format!("{}:{}", s.pack, s.decl.id) == start)
            .map(|s| s.decl.action.to_string())
            .unwrap_or_default();
    }
    let Some(action) = &f.action else {
        return d.id.clone();
    };
    if let Some((actions, pack, owner)) = d.owner
        && let Some(own) = actions
            .iter()
            .find(|x| x.id.as_deref() == Some(action.as_str()))
        && let Some(id) = action_id(ruleset, own, pack, owner)
    {
        return id;
    }
    resolve_action(ruleset, d.pack, action.as_str())
}

/// A `create` offer's qualified link slot and start (loading qualified both).
fn create_of(f: &FollowUp) -> Option<(String, String)> {
    if f.create != Some(true) {
        return None;
    }
    let id = |x: &Option<ocf_model::Id>| x.as_ref().map(|x| x.to_string()).unwrap_or_default();
    Some((id(&f.link), id(&f.start)))
}

/// The follow-up a stored qualified ID names: `<content>#<id>`, `<pack>:<type>#<id>` (its inline
/// actions listed under `source`, the item that offered it) or `<pack>:<id>`.
fn find_follow_up<'a>(
    ruleset: &'a Ruleset,
    id: &str,
    source: Option<&'a str>,
) -> Option<Declaration<'a>> {
    let Some((owner, local)) = id.rsplit_once('#') else {
        let f = ruleset.follow_ups.get(id)?;
        return Some(Declaration {
            follow_up: &f.decl,
            id: id.to_owned(),
            pack: &f.pack,
            owner: None,
        });
    };
    if let Some(entry) = ruleset.item(owner) {
        let f = entry.item.follow_ups.iter().find(|f| f.id == local)?;
        let owner = entry.item.id.as_ref().map(|x| x.as_str())?;
        return Some(Declaration {
            follow_up: f,
            id: id.to_owned(),
            pack: entry.pack_of("followUps"),
            owner: Some((&entry.item.actions, entry.pack_of("actions"), owner)),
        });
    }
    let (name, t) = ruleset.content_types.0.get_key_value(owner)?;
    let f = t.decl.follow_ups.iter().find(|f| f.id == local)?;
    Some(Declaration {
        follow_up: f,
        id: id.to_owned(),
        pack: &t.pack,
        owner: Some((&t.decl.actions, &t.pack, source.unwrap_or(name))),
    })
}

/// Whether a stored offer's follow-up still names one (upgrade's report).
pub(crate) fn follow_up_exists(ruleset: &Ruleset, id: &str, source: Option<&str>) -> bool {
    find_follow_up(ruleset, id, source).is_some()
}

/// The JSON list.
pub fn to_json(list: &[Offer]) -> Json {
    Json::Array(list.iter().map(Offer::to_json).collect())
}
