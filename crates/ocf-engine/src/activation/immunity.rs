//! The activation walk, immunities (EC "Activation", Immunities 2, 3 and 5): the active holder
//! immunities, the applied entries they block and the candidates, each candidate's immunities
//! (its applied grants' content's included) and whom it blocks; whether a source matches an
//! immunity, and which activation each immunity belongs to. The rounds (step 4) are in
//! [`super::rounds`].

use super::*;

/// Step 3: the applied entries with `active` not `false`, split into those an active holder
/// immunity blocks and the candidates, with what each candidate blocks. Lists by entry are
/// indexed by the entry's place in `applied`.
pub(super) struct Candidates<'db> {
    /// The entries with `active` not `false` whose source is loaded, in `applied` order.
    pub live: Vec<usize>,
    /// By entry: an active holder immunity blocks it.
    pub blocked_by_holder: Vec<bool>,
    /// The live entries no holder immunity blocks, in `applied` order.
    pub list: Vec<usize>,
    /// By entry: a candidate's immunities (`scope: applied`, `when` holding), its source's, then
    /// those of the content its applied grants reach, less grants a holder immunity blocks.
    pub own: Vec<Vec<ActiveImmunity<'db>>>,
    /// By entry: the candidates that block it, in `applied` order.
    pub blockers: Vec<Vec<usize>>,
}

impl<'db> Walk<'db> {
    /// Step 2: the active holder immunities, the rules' then each holder activation's (`scope`
    /// `holder`, `when` holding), in activation order, then the order they are written in.
    pub(super) fn holder_immunities(&self) -> Vec<ActiveImmunity<'db>> {
        let mut holder: Vec<ActiveImmunity<'db>> = Vec::new();
        for (i, immunity) in self.ruleset.immune_to.iter().enumerate() {
            if self.condition(immunity.decl.when.as_ref(), Bindings::rules(&immunity.pack)) {
                holder.push(ActiveImmunity {
                    activation: None,
                    rules: true,
                    owner: immunity.pack.clone(),
                    pack: &immunity.pack,
                    immunity: &immunity.decl,
                    written: i,
                    bindings: Bindings::rules(&immunity.pack),
                    entry: None,
                    chain: Vec::new(),
                });
            }
        }
        for index in 0..self.out.list.len() {
            let activation = self.out.list[index].clone();
            let Some(entry) = self.ruleset.item(&activation.item) else {
                continue;
            };
            let pack = entry.pack_of("immuneTo");
            for (i, immunity) in entry.item.immune_to.iter().enumerate() {
                if immunity.scope == Some(Scope::Applied) {
                    continue;
                }
                let bindings = self.bindings(&activation, pack);
                if self.condition(immunity.when.as_ref(), bindings.clone()) {
                    holder.push(ActiveImmunity {
                        activation: Some(index),
                        rules: false,
                        owner: activation.item.to_string(),
                        pack,
                        immunity,
                        written: i,
                        bindings,
                        entry: None,
                        chain: Vec::new(),
                    });
                }
            }
        }
        holder
    }

    /// Step 3: an entry whose source matches an active holder immunity is blocked, the others
    /// are candidates; a candidate blocks every other entry (never itself) whose source one of its
    /// immunities matches, before or after it in `applied` (with step 5's grants' immunities).
    pub(super) fn candidates(
        &self,
        applied: &[AppliedEntry],
        holder: &[ActiveImmunity<'db>],
    ) -> Candidates<'db> {
        let live: Vec<usize> = (0..applied.len())
            .filter(|&i| {
                applied[i].active != Some(false)
                    && self.ruleset.item(applied[i].source.as_str()).is_some()
            })
            .collect();
        let mut blocked_by_holder = vec![false; applied.len()];
        for &i in &live {
            let source = applied[i].source.as_str();
            blocked_by_holder[i] = holder
                .iter()
                .any(|im| self.matches(im, source, &applied[i]));
        }
        let list: Vec<usize> = live
            .iter()
            .copied()
            .filter(|&i| !blocked_by_holder[i])
            .collect();
        let mut own: Vec<Vec<ActiveImmunity<'db>>> = vec![Vec::new(); applied.len()];
        for &c in &list {
            let activation = self.applied_activation(c, &applied[c]);
            let mut found = Vec::new();
            self.reach_immunities(
                &activation,
                vec![activation.item.to_string()],
                holder,
                &mut found,
                1,
            );
            own[c] = found;
        }
        let mut blockers: Vec<Vec<usize>> = vec![Vec::new(); applied.len()];
        for &x in &list {
            for &y in &list {
                if y != x
                    && own[y]
                        .iter()
                        .any(|im| self.matches(im, applied[x].source.as_str(), &applied[x]))
                {
                    blockers[x].push(y);
                }
            }
        }
        Candidates {
            live,
            blocked_by_holder,
            list,
            own,
            blockers,
        }
    }

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
