//! The choice list, `pending`, and the choice issues (EC, "Pending choices and issues", "The
//! choice list"): `choice-not-applicable`, `too-many-picks`, `no-eligible-option`,
//! `option-not-eligible` and `already-picked`, and the `prerequisite-not-met` of picked inline
//! options.
//!
//! The walk in [`crate::activation`] records every choice it meets; here they are put in the
//! chapter's pre-order and checked against the sheet. Eligibility (a query's or values' `where`, a
//! formula's list, `eligible`) is not an activation condition, so it reads computed fields: this
//! runs after the fields, from the sheet's remembered rest.

use ocf_formula::Value;
use ocf_model::{ChoiceOptions, ChoiceSource, Literal, Namespace, Prerequisite, Ruleset};
use rustc_hash::FxHashMap;
use serde_json::{Map, Value as Json, json};

use crate::context::{Bindings, Mode, SelfRef, SheetContext};

use crate::db::{Activations, CharacterInput, ChoiceRecord, ItemKey, Via};
use crate::report::{RankedIssue, activation_source, kind_rank, path_json};
use crate::view::applied_self;

/// The recorded choices in the order of `pending`: the rules-level choices, then each
/// activation's own choices in declaration order, each followed at once by the choices of what
/// was picked in it (inline options' choices, then picked content's), then those of the
/// activations it reaches (templates, grants), in activation order.
pub fn choice_order(acts: &Activations) -> Vec<usize> {
    // Children by parent (the last slot for activations without one), and top-level choices by
    // owner, so the walk is linear in the activations.
    let n = acts.list.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    for (i, a) in acts.list.iter().enumerate() {
        children[a.parent.unwrap_or(n)].push(i);
    }
    let mut owned: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    let mut nested: Vec<Vec<usize>> = vec![Vec::new(); acts.choices.len()];
    for (i, record) in acts.choices.iter().enumerate() {
        match record.parent_record {
            Some(p) => nested[p].push(i),
            None => owned[record.owner.unwrap_or(n)].push(i),
        }
    }
    let mut out = Vec::new();
    // An explicit stack keeps deep trees off the call stack.
    enum Step {
        Owner(Option<usize>),
        Record(usize),
    }
    let mut stack = vec![Step::Owner(None)];
    while let Some(step) = stack.pop() {
        let mut next = Vec::new();
        match step {
            Step::Record(r) => {
                out.push(r);
                let record = &acts.choices[r];
                next.extend(nested[r].iter().map(|&c| Step::Record(c)));
                let slot = record.owner.unwrap_or(n);
                for &p in &children[slot] {
                    let a = &acts.list[p];
                    let picked_here = a.via == Via::Pick
                        && a.path.as_ref().is_some_and(|path| {
                            path.len() >= 2 && path[..path.len() - 1] == record.path[..]
                        });
                    if picked_here {
                        next.push(Step::Owner(Some(p)));
                    }
                }
            }
            Step::Owner(owner) => {
                let slot = owner.unwrap_or(n);
                next.extend(owned[slot].iter().map(|&r| Step::Record(r)));
                for &c in &children[slot] {
                    let a = &acts.list[c];
                    let reached = owner.is_some() && matches!(a.via, Via::Template | Via::Grant);
                    let top = owner.is_none() && a.via == Via::Copy;
                    if reached || top {
                        next.push(Step::Owner(Some(c)));
                    }
                }
            }
        }
        stack.extend(next.into_iter().rev());
    }
    out
}

/// `choices`, `pending`, and the choice issues, with the `no-eligible-option` issues that only
/// trial sheets can settle ([`crate::option_trials`]).
pub fn choice_lists(
    db: &dyn salsa::Database,
    character: CharacterInput,
    acts: &Activations,
) -> (Vec<Json>, Vec<Json>, Vec<RankedIssue>, Vec<Unsettled>) {
    let checker = Checker::new(db, character, acts);
    let order = choice_order(acts);
    let groups = checker.unique_groups(&order);
    // The picked inline options by the choice they were picked in, in pick order.
    let mut inline: FxHashMap<usize, Vec<&str>> = FxHashMap::default();
    for pick in &acts.inline_picks {
        inline.entry(pick.record).or_default().push(&pick.option);
    }
    let (mut choices, mut pending, mut issues) = (Vec::new(), Vec::new(), Vec::new());
    let mut unsettled = Vec::new();
    for &i in &order {
        let record = &acts.choices[i];
        let rank = record.owner.map_or(0, |a| a + 1);
        let path = path_json(record.entry.as_deref(), &record.path);
        let issue = |code: &str, data: Json| {
            (
                rank,
                kind_rank(code),
                json!({
                    "code": code,
                    "id": checker.issue_id(record),
                    "source": checker.source(record),
                    "data": data,
                }),
            )
        };
        if !record.applicable {
            if !record.picks.is_empty() {
                issues.push(issue("choice-not-applicable", json!({ "path": path })));
            }
            continue;
        }
        for option in inline.get(&i).into_iter().flatten() {
            for prerequisite in checker.failed_prerequisites(record, option) {
                let mut pick = record.path.clone();
                pick.push((*option).to_owned());
                issues.push((
                    rank,
                    kind_rank("prerequisite-not-met"),
                    json!({
                        "code": "prerequisite-not-met",
                        "id": checker.prerequisite_id(record, prerequisite),
                        "source": checker.source(record),
                        "data": { "path": path_json(record.entry.as_deref(), &pick) },
                    }),
                ));
            }
        }
        let picked = record.picks.len() as i64;
        let is_pending = record.required && picked < record.min;
        if is_pending && record.decl.requires_option == Some(true) {
            match checker.eligibility(record, &groups.taken_before(i)) {
                Eligibility::Found => {}
                Eligibility::Missing => {
                    issues.push(issue("no-eligible-option", json!({ "path": path })));
                }
                Eligibility::Unsettled(tries) => {
                    let tentative = issue("no-eligible-option", json!({ "path": path }));
                    unsettled.push(Unsettled {
                        issue: tentative.2.clone(),
                        entry: record.entry.clone(),
                        path: record.path.clone(),
                        tries,
                    });
                    issues.push(tentative);
                }
            }
        }
        if record.max.is_some_and(|max| picked > max) {
            issues.push(issue(
                "too-many-picks",
                json!({ "path": path, "max": record.max, "picked": picked }),
            ));
        }
        for option in &record.picks {
            if !checker.pick_eligible(record, option) {
                issues.push(issue(
                    "option-not-eligible",
                    json!({ "path": path, "option": option }),
                ));
            }
        }
        for (option, earlier) in groups.repeats.get(&i).into_iter().flatten() {
            let earlier = &acts.choices[*earlier];
            issues.push(issue(
                "already-picked",
                json!({
                    "path": path,
                    "option": option,
                    "earlier": path_json(earlier.entry.as_deref(), &earlier.path),
                }),
            ));
        }
        // EC: "`content-hidden` covers hidden content picked in a choice with `activate: false`
        // too; it belongs to the choice's owner." Picks that activate are their own activations'.
        if record.decl.activate == Some(false)
            && matches!(
                record.decl.options,
                ocf_model::ChoiceOptions::Source(ocf_model::ChoiceSource::Content { .. })
            )
        {
            for option in record.picks.iter().filter_map(|o| o.as_str()) {
                let content = checker
                    .ruleset
                    .item(option)
                    .map(|_| option.to_owned())
                    .or_else(|| {
                        checker
                            .ruleset
                            .resolve(&record.pack, option, ocf_model::Namespace::Content)
                    });
                if let Some(content) = content
                    && checker.ruleset.item(&content).is_some_and(|e| e.hidden)
                {
                    issues.push((
                        rank,
                        kind_rank("content-hidden"),
                        json!({
                            "code": "content-hidden",
                            "id": content,
                            "source": checker.source(record),
                            "data": { "item": content },
                        }),
                    ));
                }
            }
        }
        let open = record.max.is_none_or(|max| picked < max);
        let slot = record
            .slot
            .as_ref()
            .map(|(choice, number)| json!({ "choice": choice, "number": number }));
        let mut c = Map::new();
        c.insert("path".into(), path.clone());
        c.insert("owner".into(), record.root.clone().into());
        c.insert("id".into(), record.id.clone().into());
        if let Some(slot) = &slot {
            c.insert("slot".into(), slot.clone());
        }
        c.insert("min".into(), record.min.into());
        if let Some(max) = record.max {
            c.insert("max".into(), max.into());
        }
        c.insert("picks".into(), Json::Array(record.picks.clone()));
        c.insert("open".into(), open.into());
        choices.push(Json::Object(c));
        if is_pending {
            let mut p = Map::new();
            p.insert("path".into(), path);
            p.insert("min".into(), record.min.into());
            if let Some(max) = record.max {
                p.insert("max".into(), max.into());
            }
            p.insert("picked".into(), picked.into());
            if let Some(slot) = slot {
                p.insert("slot".into(), slot);
            }
            pending.push(Json::Object(p));
        }
    }
    (choices, pending, issues, unsettled)
}

/// A pending `requiresOption` choice whose `no-eligible-option` only trial sheets can settle:
/// its issue is listed until one of `tries` proves eligible on its trial
/// ([`crate::option_trials`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Unsettled {
    /// The issue as listed.
    pub issue: Json,
    /// The choice's owner copy (none at the rules level) and path.
    pub entry: Option<String>,
    pub path: Vec<String>,
    /// The options not yet picked whose own pick may change their verdict, those the sheet as it
    /// is finds eligible first.
    pub tries: Vec<Literal>,
}

/// What the sheet as it is says of a pending `requiresOption` choice's options.
enum Eligibility {
    /// An option is eligible, and its pick can't change that.
    Found,
    /// No option is, and no pick can change that.
    Missing,
    /// No option is both eligible and settled: these options' trials decide.
    Unsettled(Vec<Literal>),
}

/// The `unique` groups' picks: which picks repeat an earlier choice's, and what each choice's
/// group had taken before it.
struct Groups {
    /// By record: the group key it belongs to.
    key: FxHashMap<usize, String>,
    /// By group key: every pick in order, `(record, option)`.
    picks: FxHashMap<String, Vec<(usize, Literal)>>,
    /// By record: `(option, earlier record)` for each pick already picked in the group.
    repeats: FxHashMap<usize, Vec<(Literal, usize)>>,
}

impl Groups {
    /// The options other choices of `record`'s group picked before it (its own excluded).
    fn taken_before(&self, record: usize) -> Vec<Literal> {
        let Some(key) = self.key.get(&record) else {
            return Vec::new();
        };
        self.picks[key]
            .iter()
            .filter(|(r, _)| *r != record)
            .map(|(_, o)| o.clone())
            .collect()
    }
}

struct Checker<'a> {
    db: &'a dyn salsa::Database,
    character: CharacterInput,
    ruleset: &'a Ruleset,
    acts: &'a Activations,
}

impl<'a> Checker<'a> {
    fn new(db: &'a dyn salsa::Database, character: CharacterInput, acts: &'a Activations) -> Self {
        Checker {
            db,
            character,
            ruleset: character.ruleset(db).ruleset(db),
            acts,
        }
    }

    /// A choice issue's `id`: the content ID of the item that declares the choice (`rules` for a
    /// rules-level one), `/`, the choice's ID (its slot key for a slot).
    fn issue_id(&self, record: &ChoiceRecord) -> String {
        let owner = match record.owner {
            Some(a) => &*self.acts.list[a].item,
            None => "rules",
        };
        format!("{owner}/{}", record.id)
    }

    /// A picked inline option's prerequisite's `id`: the declaring content (or `rules`), as for
    /// the choice's issues, `/`, the prerequisite's ID (decisions.md, "Inline options").
    fn prerequisite_id(&self, record: &ChoiceRecord, prerequisite: &Prerequisite) -> String {
        let owner = match record.owner {
            Some(a) => &*self.acts.list[a].item,
            None => "rules",
        };
        format!("{owner}/{}", prerequisite.id)
    }

    /// The prerequisites of the inline option `option` picked in `record` that are not true on
    /// the sheet, in written order; none when the choice waives them. They read computed fields,
    /// as content's prerequisites do, with the choice's `self`, `item` and `slot`.
    fn failed_prerequisites(
        &self,
        record: &'a ChoiceRecord,
        option: &str,
    ) -> impl Iterator<Item = &'a Prerequisite> {
        let declared = match &record.decl.options {
            ChoiceOptions::Inline(options) if record.decl.waive_prerequisites != Some(true) => {
                options.iter().find(|o| o.id == option)
            }
            _ => None,
        };
        declared
            .into_iter()
            .flat_map(|o| &o.prerequisites)
            .filter(move |p| !self.holds(Some(&p.check), self.bindings(record)))
    }

    fn source(&self, record: &ChoiceRecord) -> Json {
        match record.owner {
            Some(a) => activation_source(&self.acts.list[a]).to_json(),
            None => json!({ "type": "rules", "id": record.root }),
        }
    }

    /// The group of every applicable choice with `unique`, walked in choice order: a local key is
    /// the declaring pack's group, a qualified one that pack's; `uniqueScope: owner` keeps the
    /// group to the owner activation. A pick of an option an earlier choice of the group picked
    /// repeats it, unless the option is `repeatable` content.
    fn unique_groups(&self, order: &[usize]) -> Groups {
        let mut groups = Groups {
            key: FxHashMap::default(),
            picks: FxHashMap::default(),
            repeats: FxHashMap::default(),
        };
        for &i in order {
            let record = &self.acts.choices[i];
            let Some(unique) = record.decl.unique.as_deref().filter(|_| record.applicable) else {
                continue;
            };
            let mut key = if unique.contains(':') {
                unique.to_owned()
            } else {
                format!("{}:{unique}", record.pack)
            };
            if record.decl.unique_scope == Some(ocf_model::UniqueScope::Owner) {
                key = format!("{key}@{:?}", record.owner);
            }
            // Content options compare as qualified IDs, however a pick writes them.
            let same = |r: usize, o: &Literal, option: &Literal| {
                o == option
                    || self
                        .content_option(&self.acts.choices[r], o)
                        .is_some_and(|q| Some(q) == self.content_option(record, option))
            };
            let taken = groups.picks.entry(key.clone()).or_default();
            for option in &record.picks {
                let earlier = taken
                    .iter()
                    .find(|(r, o)| *r != i && same(*r, o, option))
                    .map(|(r, _)| *r);
                if let Some(earlier) = earlier
                    && !self.repeatable(record, option)
                {
                    groups
                        .repeats
                        .entry(i)
                        .or_default()
                        .push((option.clone(), earlier));
                }
            }
            taken.extend(record.picks.iter().map(|o| (i, o.clone())));
            groups.key.insert(i, key);
        }
        groups
    }

    fn repeatable(&self, record: &ChoiceRecord, option: &Literal) -> bool {
        self.content_option(record, option)
            .and_then(|id| self.ruleset.item(&id))
            .is_some_and(|e| e.item.repeatable == Some(true))
    }

    /// A content choice's option as a qualified content ID.
    fn content_option(&self, record: &ChoiceRecord, option: &Literal) -> Option<String> {
        let text = option.as_str()?;
        if self.ruleset.item(text).is_some() {
            return Some(text.to_owned());
        }
        self.ruleset.resolve(&record.pack, text, Namespace::Content)
    }

    /// What the choice's formulas see: the owner's `self` and `item`, the choice's `slot`.
    fn bindings(&self, record: &'a ChoiceRecord) -> Bindings<'a> {
        let mut bindings = Bindings::rules(&record.pack);
        bindings.slot = record.bound_slot;
        if let Some(a) = record.owner {
            let a = &self.acts.list[a];
            bindings.self_ref = match (a.copy, a.applied_entry) {
                (Some(copy), _) => SelfRef::Copy(copy),
                (None, Some(e)) => SelfRef::Value(applied_self(
                    self.ruleset,
                    &self.character.applied(self.db)[e],
                )),
                (None, None) => SelfRef::None,
            };
            bindings.item = Some(ItemKey::of_activation(
                self.db,
                self.character.ruleset(self.db),
                a,
            ));
        }
        bindings
    }

    fn item_key(&self, content: &str, templates: Vec<String>) -> ItemKey<'a> {
        ItemKey::new(
            self.db,
            self.character.ruleset(self.db),
            content.to_owned(),
            templates,
        )
    }

    /// Evaluates a condition on the sheet; anything but `true` (an error included) fails.
    fn holds(&self, formula: Option<&ocf_model::Formula>, bindings: Bindings<'a>) -> bool {
        let Some(formula) = formula else {
            return true;
        };
        let ctx = SheetContext::new(self.db, self.character, Mode::Sheet, bindings);
        ctx.evaluate(formula.as_str()) == Ok(Value::Bool(true))
    }

    /// Whether `option` is one of the choice's options now: content of the query's type whose
    /// `where` holds (`item` the candidate), a listed value whose `where` holds, a value the
    /// formula lists, an inline option's ID; and `eligible` holds for it (`pick` the option as
    /// a pick binds it, `item` the candidate content). Decisions.md, "Choice eligibility".
    fn pick_eligible(&self, record: &'a ChoiceRecord, option: &Literal) -> bool {
        let mut bindings = self.bindings(record);
        match &record.decl.options {
            ChoiceOptions::Inline(options) => {
                if !options
                    .iter()
                    .any(|o| option.as_str() == Some(o.id.as_str()))
                {
                    return false;
                }
            }
            ChoiceOptions::Source(ChoiceSource::Content { content }) => {
                let Some(id) = self.content_option(record, option) else {
                    return false;
                };
                let Some(entry) = self.ruleset.item(&id) else {
                    return false;
                };
                if !self.of_type(record, entry.type_name(), content.r#type.as_str()) {
                    return false;
                }
                bindings.item = Some(self.item_key(&id, Vec::new()));
                bindings.pick = Some(pick_value(&id, option));
                if !self.holds(content.r#where.as_ref(), bindings.clone()) {
                    return false;
                }
            }
            ChoiceOptions::Source(ChoiceSource::Values { values, where_ }) => {
                if !values.contains(option) {
                    return false;
                }
                bindings.pick = Some(pick_value(&literal_text(option), option));
                if !self.holds(where_.as_ref(), bindings.clone()) {
                    return false;
                }
            }
            ChoiceOptions::Source(ChoiceSource::Formula { formula }) => {
                let listed = self.formula_values(formula, bindings.clone());
                let value = crate::view::literal_value(option, None);
                if !value.is_some_and(|v| listed.contains(&v)) {
                    return false;
                }
            }
        }
        if bindings.pick.is_none() {
            bindings.pick = Some(pick_value(&literal_text(option), option));
        }
        self.holds(record.decl.eligible.as_ref(), bindings)
    }

    /// Whether content of `type_name` (qualified) is of the query's `wanted` type, as written in
    /// the choice's pack.
    fn of_type(&self, record: &ChoiceRecord, type_name: Option<&str>, wanted: &str) -> bool {
        let Some(type_name) = type_name else {
            return false;
        };
        type_name == wanted
            || self
                .ruleset
                .resolve(&record.pack, wanted, Namespace::ContentType)
                .is_some_and(|q| q == type_name)
    }

    fn formula_values(&self, formula: &ocf_model::Formula, bindings: Bindings<'a>) -> Vec<Value> {
        let ctx = SheetContext::new(self.db, self.character, Mode::Sheet, bindings);
        match ctx.evaluate(formula.as_str()) {
            Ok(Value::List(items)) => items.iter().cloned().collect(),
            _ => Vec::new(),
        }
    }

    /// Whether a pending choice has an option not yet picked (here, or earlier in its `unique`
    /// group) that is eligible, as its trial sheet would judge it (EC: "as `listOptions` lists
    /// them"). Hidden content isn't offered. An option whose pick adds nothing that could change
    /// a field ([`Checker::settled`]) has the trial sheet's verdict on this sheet; the others are
    /// left to their trials ([`crate::option_trials`]), those eligible here first.
    fn eligibility(&self, record: &'a ChoiceRecord, taken: &[Literal]) -> Eligibility {
        // Content options compare as qualified IDs, however a pick writes them.
        let norm = |o: &Literal| match &record.decl.options {
            ChoiceOptions::Source(ChoiceSource::Content { .. }) => self
                .content_option(record, o)
                .map_or_else(|| o.clone(), Literal::String),
            _ => o.clone(),
        };
        let used: Vec<Literal> = record.picks.iter().chain(taken).map(norm).collect();
        let (mut here, mut not_here) = (Vec::new(), Vec::new());
        for o in self.candidates(record) {
            if used.contains(&o) {
                continue;
            }
            let eligible = self.pick_eligible(record, &o) && self.prerequisites_hold(record, &o);
            match (self.settled(record, &o), eligible) {
                (true, true) => return Eligibility::Found,
                (true, false) => {}
                (false, true) => here.push(o),
                (false, false) => not_here.push(o),
            }
        }
        if here.is_empty() && not_here.is_empty() {
            return Eligibility::Missing;
        }
        here.extend(not_here);
        Eligibility::Unsettled(here)
    }

    /// Whether picking `option` adds nothing that could change a field, so that its trial
    /// sheet's fields, and the checks that read them, are this sheet's: the choice has no
    /// `effects`, and the option (an inline option, or content the choice activates, with its
    /// content type) has no effects, grants, immunities, standard copies, kept templates or
    /// hidden content. Activation reads no pick but through these (EC "Activation conditions").
    fn settled(&self, record: &ChoiceRecord, option: &Literal) -> bool {
        if !record.decl.effects.is_empty() {
            return false;
        }
        match &record.decl.options {
            ChoiceOptions::Inline(options) => options
                .iter()
                .find(|o| option.as_str() == Some(o.id.as_str()))
                .is_none_or(|o| o.effects.is_empty() && o.grants.is_empty()),
            ChoiceOptions::Source(ChoiceSource::Content { .. })
                if record.decl.activate != Some(false) =>
            {
                let Some(entry) = self
                    .content_option(record, option)
                    .and_then(|id| self.ruleset.item(&id))
                else {
                    return true;
                };
                let item = &entry.item;
                let own = item.effects.is_empty()
                    && item.grants.is_empty()
                    && item.immune_to.is_empty()
                    && item.standard_copies.is_empty()
                    && item.keeps_templates.is_empty()
                    && item.hides.is_empty();
                let of_type = entry
                    .type_name()
                    .and_then(|t| self.ruleset.content_type(t))
                    .is_none_or(|t| t.decl.effects.is_empty() && t.decl.grants.is_empty());
                own && of_type
            }
            _ => true,
        }
    }

    /// Whether the prerequisites `option` brings hold: an inline option's own, or the picked
    /// content's (when the choice activates its picks), none when the choice waives them. EC:
    /// "listOptions' trial sheet for an option reports it with the option's prerequisites": an
    /// option whose prerequisites fail is not eligible. They are read on this sheet, with the
    /// owner's `self` and the candidate as `item` (decisions.md, "listOptions": trial sheets).
    fn prerequisites_hold(&self, record: &'a ChoiceRecord, option: &Literal) -> bool {
        if record.decl.waive_prerequisites == Some(true) {
            return true;
        }
        match &record.decl.options {
            ChoiceOptions::Inline(_) => option
                .as_str()
                .is_none_or(|o| self.failed_prerequisites(record, o).next().is_none()),
            ChoiceOptions::Source(ChoiceSource::Content { .. })
                if record.decl.activate != Some(false) =>
            {
                let Some(id) = self.content_option(record, option) else {
                    return true;
                };
                let Some(entry) = self.ruleset.item(&id) else {
                    return true;
                };
                let pack = entry.pack_of("prerequisites");
                entry.item.prerequisites.iter().all(|p| {
                    let mut bindings = self.bindings(record);
                    bindings.pack = pack;
                    bindings.item = Some(self.item_key(&id, Vec::new()));
                    self.holds(Some(&p.check), bindings)
                })
            }
            _ => true,
        }
    }

    /// The choice's options in its order, as listOptions lists them: inline options as declared,
    /// values as listed, the formula's list now, content of the query's type in ruleset order
    /// (qualified IDs), hidden content skipped ("Queries skip them").
    fn candidates(&self, record: &'a ChoiceRecord) -> Vec<Literal> {
        match &record.decl.options {
            ChoiceOptions::Inline(options) => options
                .iter()
                .map(|o| Literal::String(o.id.clone()))
                .collect(),
            ChoiceOptions::Source(ChoiceSource::Values { values, .. }) => values.clone(),
            ChoiceOptions::Source(ChoiceSource::Formula { formula }) => self
                .formula_values(formula, self.bindings(record))
                .iter()
                .map(Value::to_json)
                .collect(),
            ChoiceOptions::Source(ChoiceSource::Content { content }) => self
                .ruleset
                .content
                .iter()
                .filter(|(_, e)| {
                    !e.hidden && self.of_type(record, e.type_name(), content.r#type.as_str())
                })
                .map(|(id, _)| Literal::String(id.to_owned()))
                .collect(),
        }
    }
}

/// The options of the choice `record` (an index in [`Activations::choices`]) in the choice's
/// order, hidden content skipped; shared with listOptions ([`crate::options`]).
pub(crate) fn options_of(
    db: &dyn salsa::Database,
    character: CharacterInput,
    acts: &Activations,
    record: usize,
) -> Vec<Literal> {
    let checker = Checker::new(db, character, acts);
    checker.candidates(&acts.choices[record])
}

/// The choice's own recommendation (its `recommend`; DA, over pending choices: "without it the
/// choice's own recommendation applies"): the formula evaluated as the choice's other formulas are
/// (the owner's `self` and `item`, `slot`), when it gives one of the choice's options (content
/// qualified). A formula that fails or names no option recommends nothing.
pub(crate) fn recommended_of(
    db: &dyn salsa::Database,
    character: CharacterInput,
    acts: &Activations,
    record: usize,
) -> Option<Literal> {
    let r = &acts.choices[record];
    let formula = r.decl.recommend.as_ref()?;
    let checker = Checker::new(db, character, acts);
    let ctx = SheetContext::new(db, character, Mode::Sheet, checker.bindings(r));
    let value = ctx.evaluate(formula.as_str()).ok()?;
    option_of(db, character, acts, record, &value.to_json())
}

/// Whether `option` is one of the choice's options at all, the test of a `choose`'s
/// `invalid-option`: an inline option's ID, a listed value, a value the formula lists now, or
/// content of the query's type (hidden content included: picking it is `content-hidden`, not an
/// invalid pick). Eligibility (`where`, `eligible`) is not asked: a pick failing it is
/// `option-not-eligible` on the sheet. Content is given back qualified.
pub(crate) fn option_of(
    db: &dyn salsa::Database,
    character: CharacterInput,
    acts: &Activations,
    record: usize,
    option: &Literal,
) -> Option<Literal> {
    let checker = Checker::new(db, character, acts);
    let r = &acts.choices[record];
    match &r.decl.options {
        ChoiceOptions::Source(ChoiceSource::Content { content }) => {
            let id = checker.content_option(r, option)?;
            let entry = checker.ruleset.item(&id)?;
            checker
                .of_type(r, entry.type_name(), content.r#type.as_str())
                .then_some(Literal::String(id))
        }
        _ => checker.candidates(r).into_iter().find(|o| {
            o == option || literal_text(o) == literal_text(option) && o.as_str().is_some()
        }),
    }
}

/// Whether `option` is eligible on a trial sheet: the character `trial` has it picked in the
/// choice `record` (an index in its activations' choices), and it passes the choice's checks and
/// its prerequisites hold there, as listOptions' trial sheet judges it ([`crate::option_trials`]).
pub(crate) fn eligible_on_trial(
    db: &dyn salsa::Database,
    trial: CharacterInput,
    acts: &Activations,
    record: usize,
    option: &Literal,
) -> bool {
    let checker = Checker::new(db, trial, acts);
    let r = &acts.choices[record];
    checker.pick_eligible(r, option) && checker.prerequisites_hold(r, option)
}

/// `pick` for a candidate: `{ id, value }`, as a choice's effects see a pick.
fn pick_value(id: &str, option: &Literal) -> Value {
    let value = crate::view::literal_value(option, None).unwrap_or_default();
    Value::map([("id", Value::string(id)), ("value", value)])
}

fn literal_text(option: &Literal) -> String {
    match option {
        Literal::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The issues the sheet would raise against `option` if it were picked in the choice `record`
/// (an index in [`Activations::choices`]), found without a trial sheet, for a choice no file can
/// hold picks of (an applied entry's: decisions.md, "listOptions"): `option-not-eligible` when it
/// fails the choice's checks, `prerequisite-not-met` for an inline option's prerequisites that are
/// false, `already-picked` when another choice of its `unique` group picked it. Each is written as
/// [`choice_lists`] writes it.
pub(crate) fn untried_reasons(
    db: &dyn salsa::Database,
    character: CharacterInput,
    acts: &Activations,
    record: usize,
    option: &Literal,
) -> Vec<Json> {
    let checker = Checker::new(db, character, acts);
    let r = &acts.choices[record];
    let path = path_json(r.entry.as_deref(), &r.path);
    let issue = |code: &str, data: Json| {
        json!({
            "code": code,
            "id": checker.issue_id(r),
            "source": checker.source(r),
            "data": data,
        })
    };
    let mut reasons = Vec::new();
    if let Some(text) = option.as_str() {
        for prerequisite in checker.failed_prerequisites(r, text) {
            let mut pick = r.path.clone();
            pick.push(text.to_owned());
            reasons.push(json!({
                "code": "prerequisite-not-met",
                "id": checker.prerequisite_id(r, prerequisite),
                "source": checker.source(r),
                "data": { "path": path_json(r.entry.as_deref(), &pick) },
            }));
        }
    }
    if !checker.pick_eligible(r, option) {
        reasons.push(issue(
            "option-not-eligible",
            json!({ "path": path, "option": option }),
        ));
    }
    let groups = checker.unique_groups(&choice_order(acts));
    if let Some(key) = groups.key.get(&record) {
        let qualified = checker.content_option(r, option);
        let earlier = groups.picks[key].iter().find(|(e, o)| {
            *e != record
                && (o == option
                    || qualified.is_some()
                        && checker.content_option(&acts.choices[*e], o) == qualified)
        });
        if let Some((e, _)) = earlier
            && !checker.repeatable(r, option)
        {
            let e = &acts.choices[*e];
            reasons.push(issue(
                "already-picked",
                json!({
                    "path": path,
                    "option": option,
                    "earlier": path_json(e.entry.as_deref(), &e.path),
                }),
            ));
        }
    }
    reasons
}
