//! The activation walk, picks (EC "Activation", picks; "Pending choices and issues"): the
//! rules-level picks, each choice's picks followed down its tree, inline options, and the
//! choice records the choice list reads.

use super::*;

impl<'db> Walk<'db> {
    pub(super) fn rules_picks(&mut self) {
        let rules_choices = self.character.choices(self.db).clone();
        for (id, choice) in self.ruleset.choices.iter() {
            let pack = choice.pack.as_str();
            let owner = ChoiceOwner {
                index: None,
                root: format!("{pack}:rules"),
                bindings: Bindings::rules(pack),
                pack,
                activation: None,
            };
            self.choice(&owner, &choice.decl, id.to_owned(), &rules_choices, 1, None);
        }
    }

    /// The grants, then the choices, of activation `index`, depth first. `key` is the content's
    /// key in the picks tree: `None` for the tree's own item (bare choice IDs), else the content,
    /// whose choices are keyed `<content>/<id>`.
    pub(super) fn follow(&mut self, index: usize, tree: &Picks, key: Option<&str>, depth: usize) {
        if depth > MAX_CHOICE_DEPTH {
            return;
        }
        let activation = self.out.list[index].clone();
        let Some(entry) = self.ruleset.item(&activation.item) else {
            return;
        };
        let type_decl = entry.type_name().and_then(|t| self.ruleset.content_type(t));
        let mut grants = Vec::new();
        if let Some(t) = type_decl {
            grants.extend(t.decl.grants.iter().map(|g| (g, t.pack.as_str())));
        }
        grants.extend(
            entry
                .item
                .grants
                .iter()
                .map(|g| (g, entry.pack_of("grants"))),
        );
        for (grant, pack) in grants {
            let bindings = self.bindings(&activation, pack);
            self.grant(grant, bindings, &activation, Some(index), tree, depth);
        }
        // Applied content offers no choices; content without choices needs no owner made.
        if activation.applied || entry.item.choices.is_empty() {
            return;
        }
        let pack = entry.pack_of("choices");
        let owner = ChoiceOwner {
            index: Some(index),
            root: activation.item.to_string(),
            bindings: self.bindings(&activation, pack),
            pack,
            activation: Some(activation.clone()),
        };
        for choice in &entry.item.choices {
            let base = match key {
                Some(content) => tree_key(tree, content, &choice.id),
                None => choice.id.clone(),
            };
            self.choice(&owner, choice, base, tree, depth, None);
        }
    }

    /// One declared choice: one choice per slot for a slotted one (keyed `<key>-<n>`, `slot`
    /// bound), each recorded, and its picks followed when it is applicable.
    pub(super) fn choice(
        &mut self,
        owner: &ChoiceOwner<'db>,
        choice: &Choice,
        base_key: String,
        tree: &Picks,
        depth: usize,
        parent_record: Option<usize>,
    ) {
        let slots: Vec<Option<i64>> = match &choice.slots {
            None => vec![None],
            Some(count) => {
                let n = self
                    .count(count, owner.bindings.clone())
                    .unwrap_or(0)
                    .clamp(0, MAX_SLOTS);
                (1..=n).map(Some).collect()
            }
        };
        for slot in slots {
            let (key, id) = match slot {
                Some(n) => (format!("{base_key}-{n}"), format!("{}-{n}", choice.id)),
                None => (base_key.clone(), choice.id.clone()),
            };
            let bindings = Bindings {
                slot: slot.or(owner.bindings.slot),
                ..owner.bindings.clone()
            };
            let owner = ChoiceOwner {
                bindings,
                ..owner.clone()
            };
            let applicable = self.condition(choice.when.as_ref(), owner.bindings.clone());
            let picks = tree.get(&key).cloned().unwrap_or_default();
            let record = self.record(
                choice,
                &owner,
                &key,
                id,
                slot,
                applicable,
                &picks,
                parent_record,
            );
            if applicable {
                self.picks(&owner, choice, &key, &picks, depth, record);
            }
        }
    }

    /// The picks of an applicable choice: each pick runs the choice's `effects`; a picked content
    /// option is activated (unless the choice says `activate: false`), and a picked inline option
    /// applies its effects, follows its grants and offers its own choices.
    pub(super) fn picks(
        &mut self,
        owner: &ChoiceOwner<'db>,
        choice: &Choice,
        choice_key: &str,
        picks: &[PickEntry],
        depth: usize,
        record: usize,
    ) {
        let declared_by = owner
            .index
            .map(|p| self.out.list[p].item.to_string())
            .unwrap_or_else(|| owner.pack.to_owned());
        if !choice.effects.is_empty() {
            for pick in picks {
                let id = match &pick.option {
                    serde_json::Value::String(s) => self
                        .resolve_content(owner.pack, s)
                        .unwrap_or_else(|| s.clone()),
                    other => other.to_string(),
                };
                let value = crate::view::literal_value(&pick.option, None).unwrap_or_default();
                self.out.choice_picks.push(ChoicePick {
                    owner: owner.index,
                    declared_by: declared_by.clone(),
                    option_prefix: format!("{declared_by}/{choice_key}"),
                    pack: owner.pack.to_owned(),
                    effects: choice.effects.clone(),
                    pick: Some(Value::map([("id", Value::string(id)), ("value", value)])),
                    slot: owner.bindings.slot,
                });
            }
        }
        if depth > MAX_CHOICE_DEPTH {
            return;
        }
        match &choice.options {
            ocf_model::ChoiceOptions::Inline(options) => {
                for pick in picks {
                    let Some(option) = options.iter().find(|o| pick.option.as_str() == Some(&o.id))
                    else {
                        continue;
                    };
                    self.inline_pick(owner, choice, choice_key, option, pick, depth, record);
                }
            }
            ocf_model::ChoiceOptions::Source(ocf_model::ChoiceSource::Content { .. })
                if choice.activate != Some(false) =>
            {
                for pick in picks {
                    let Some(option) = pick.option.as_str() else {
                        continue;
                    };
                    let Some(content) = self.resolve_content(owner.pack, option) else {
                        continue;
                    };
                    if self.full() {
                        return;
                    }
                    let mut path = self.prefix.clone();
                    path.extend([choice_key.to_owned(), content.clone()]);
                    let granter = owner.activation.as_ref();
                    let p = self.push(Activation {
                        item: content.as_str().into(),
                        via: Via::Pick,
                        applied: false,
                        parent: owner.index,
                        path: Some(path),
                        copy: granter.and_then(|a| a.copy),
                        applied_entry: None,
                        entry: granter.and_then(|a| a.entry.clone()),
                        templates: no_templates(),
                        waived: choice.waive_prerequisites.unwrap_or(false),
                        kept_by: None,
                    });
                    self.prefix.extend([choice_key.to_owned(), content.clone()]);
                    self.follow(p, &pick.choices, None, depth + 1);
                    self.prefix.truncate(self.prefix.len() - 2);
                }
            }
            // Values and formula options (and `activate: false`) activate nothing.
            _ => {}
        }
    }

    /// A picked inline option (EC, Activation: "A picked inline option | the owner of the choice"):
    /// its effects apply with the owner's `self`, its grants are followed as the owner's, and its
    /// choices are the owner's too, keyed in the pick's own tree under the root
    /// `<owner root>.choices.<choice>.options.<option>`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn inline_pick(
        &mut self,
        owner: &ChoiceOwner<'db>,
        choice: &Choice,
        choice_key: &str,
        option: &ocf_model::InlineOption,
        pick: &PickEntry,
        depth: usize,
        record: usize,
    ) {
        let root = format!("{}.choices.{}.options.{}", owner.root, choice.id, option.id);
        self.out.inline_picks.push(InlinePick {
            owner: owner.index,
            record,
            root: root.clone(),
            option: option.id.clone(),
            pack: owner.pack.to_owned(),
            slot: owner.bindings.slot,
        });
        if !option.effects.is_empty() {
            let declared_by = owner
                .index
                .map(|p| self.out.list[p].item.to_string())
                .unwrap_or_else(|| owner.pack.to_owned());
            self.out.choice_picks.push(ChoicePick {
                owner: owner.index,
                declared_by,
                option_prefix: root.clone(),
                pack: owner.pack.to_owned(),
                effects: option.effects.clone(),
                pick: None,
                slot: owner.bindings.slot,
            });
        }
        self.prefix
            .extend([choice_key.to_owned(), option.id.clone()]);
        let granter = owner.activation.clone().unwrap_or_else(|| Activation {
            item: "".into(),
            via: Via::Grant,
            applied: false,
            parent: None,
            path: None,
            copy: None,
            applied_entry: None,
            entry: None,
            templates: no_templates(),
            waived: false,
            kept_by: None,
        });
        for grant in &option.grants {
            self.grant(
                grant,
                owner.bindings.clone(),
                &granter,
                owner.index,
                &pick.choices,
                depth,
            );
        }
        let nested = ChoiceOwner {
            root,
            ..owner.clone()
        };
        for inner in &option.choices {
            self.choice(
                &nested,
                inner,
                inner.id.clone(),
                &pick.choices,
                depth + 1,
                Some(record),
            );
        }
        self.prefix.truncate(self.prefix.len() - 2);
    }

    /// A count formula (a choice's `pick` or `slots`), evaluated as an activation condition is.
    pub(super) fn count(&self, f: &ocf_model::Formula, bindings: Bindings<'db>) -> Option<i64> {
        let formula = crate::formula::parse_in(self.ruleset, f.as_str()).ok()?;
        let ctx = SheetContext::new(self.db, self.character, Mode::Activation, bindings);
        match formula.evaluate(&ctx) {
            Ok(Value::Int(n)) => Some(n),
            _ => None,
        }
    }

    /// Records a choice for `choices`, `pending` and the choice issues, its pick count evaluated as
    /// an activation condition is (a count that fails to evaluate is the default, 1). Returns its
    /// index in [`Activations::choices`].
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record(
        &mut self,
        choice: &Choice,
        owner: &ChoiceOwner<'db>,
        key: &str,
        id: String,
        slot: Option<i64>,
        applicable: bool,
        picks: &[PickEntry],
        parent_record: Option<usize>,
    ) -> usize {
        let bindings = owner.bindings.clone();
        let (min, max) = match &choice.pick {
            None => (1, Some(1)),
            Some(ocf_model::PickCount::Exactly(f)) => {
                let n = self.count(f, bindings).unwrap_or(1);
                (n, Some(n))
            }
            Some(ocf_model::PickCount::Range { min, max }) => (
                min.as_ref()
                    .and_then(|f| self.count(f, bindings.clone()))
                    .unwrap_or(0),
                max.as_ref().and_then(|f| self.count(f, bindings.clone())),
            ),
        };
        let mut path = self.prefix.clone();
        path.push(key.to_owned());
        let activation = owner.activation.as_ref();
        self.out.choices.push(ChoiceRecord {
            owner: owner.index,
            root: owner.root.clone(),
            id,
            key: key.to_owned(),
            entry: activation.and_then(|a| a.entry.as_deref().map(str::to_owned)),
            path,
            applicable,
            min,
            max,
            picks: picks.iter().map(|p| p.option.clone()).collect(),
            required: choice.required != Some(false),
            slot: slot.map(|n| (choice.id.clone(), n)),
            parent_record,
            decl: std::sync::Arc::new(choice.clone()),
            pack: owner.pack.to_owned(),
            bound_slot: owner.bindings.slot,
        });
        self.out.choices.len() - 1
    }

    pub(super) fn resolve_content(&self, pack: &str, option: &str) -> Option<String> {
        if self.ruleset.item(option).is_some() {
            return Some(option.to_owned());
        }
        self.ruleset
            .resolve(pack, option, ocf_model::Namespace::Content)
    }
}

/// The key of a granted content's or template's choice in the picks tree: `<content>/<id>`, with
/// the content's qualified ID when the tree uses it, else its local one (decisions.md, "Choice
/// keys of granted content").
fn tree_key(tree: &Picks, content: &str, id: &str) -> String {
    let qualified = format!("{content}/{id}");
    if tree.get(&qualified).is_some() {
        return qualified;
    }
    format!("{}/{id}", crate::view::bare(content))
}
