//! The activation walk, immunity rounds (EC "Immunity"): which immunities an applied entry and
//! its grants meet, and which activation each immunity belongs to.

use super::*;

impl<'db> Walk<'db> {
    /// The `scope: applied` immunities whose `when` holds of `activation` (applied content) and of
    /// the content its applied grants reach, depth first, skipping grants a holder immunity blocks.
    pub(super) fn reach_immunities(
        &self,
        activation: &Activation,
        chain: Vec<String>,
        holder: &[ActiveImmunity<'db>],
        out: &mut Vec<ActiveImmunity<'db>>,
        depth: usize,
    ) {
        let Some(content) = self.ruleset.item(&activation.item) else {
            return;
        };
        let Some(index) = activation.applied_entry else {
            return;
        };
        let entry = &self.character.applied(self.db)[index];
        let pack = content.pack_of("immuneTo");
        for (i, immunity) in content.item.immune_to.iter().enumerate() {
            if immunity.scope != Some(Scope::Applied) {
                continue;
            }
            let bindings = self.bindings(activation, pack);
            if self.condition(immunity.when.as_ref(), bindings.clone()) {
                out.push(ActiveImmunity {
                    activation: None,
                    rules: false,
                    owner: activation.item.to_string(),
                    pack,
                    immunity,
                    written: i,
                    bindings,
                    entry: Some(index),
                    chain: chain.clone(),
                });
            }
        }
        if depth > MAX_CHOICE_DEPTH {
            return;
        }
        for (grant, pack) in self.grants_of(content) {
            if grant.scope != Some(Scope::Applied)
                || !self.condition(grant.when.as_ref(), self.bindings(activation, pack))
            {
                continue;
            }
            let granted = grant.item.as_str();
            if self.ruleset.item(granted).is_none()
                || holder.iter().any(|im| self.matches(im, granted, entry))
            {
                continue;
            }
            let next = Activation {
                item: granted.into(),
                ..activation.clone()
            };
            let mut chain = chain.clone();
            chain.push(granted.to_owned());
            self.reach_immunities(&next, chain, holder, out, depth + 1);
        }
    }

    /// The activation an immunity belongs to: a holder one's own; an applied one's the activation
    /// of the content it was found on (its entry's, when that content wasn't activated).
    pub(super) fn immunity_activation(&self, im: &ActiveImmunity<'db>) -> Option<usize> {
        if im.activation.is_some() {
            return im.activation;
        }
        let entry = im.entry?;
        let chain_of = |mut i: usize| {
            let mut chain = vec![&*self.out.list[i].item];
            while let Some(p) = self.out.list[i].parent {
                chain.push(&*self.out.list[p].item);
                i = p;
            }
            chain.reverse();
            chain
        };
        let of_entry: Vec<usize> = (0..self.out.list.len())
            .filter(|&i| self.out.list[i].applied && self.out.list[i].applied_entry == Some(entry))
            .collect();
        of_entry
            .iter()
            .copied()
            .find(|&i| chain_of(i) == im.chain)
            .or_else(|| of_entry.first().copied())
    }

    /// Whether `source` (an applied entry's source, or content its applied grants reach) matches
    /// the immunity: it is in `items`, or of the query's type with its `where` holding (`item` the
    /// source, `entry` the applied entry).
    pub(super) fn matches(
        &self,
        im: &ActiveImmunity<'db>,
        source: &str,
        entry: &AppliedEntry,
    ) -> bool {
        if im.immunity.items.iter().any(|i| i.as_str() == source) {
            return true;
        }
        let Some(query) = &im.immunity.query else {
            return false;
        };
        let Some(content) = self.ruleset.item(source) else {
            return false;
        };
        if content.type_name() != Some(query.r#type.as_str()) {
            return false;
        }
        let bindings = Bindings {
            item: Some(ItemKey::new(
                self.db,
                self.character.ruleset(self.db),
                source,
                &[] as &[String],
            )),
            entry: Some(applied_self(self.ruleset, entry)),
            ..im.bindings.clone()
        };
        self.condition(query.r#where.as_ref(), bindings)
    }
}
