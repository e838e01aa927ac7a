//! `Session::apply`: applyChanges on an open character, as edits of its inputs, so only what the
//! changes touch is recomputed. A batch that fails leaves the session as it was.

use ocf_model::Change;

use super::{Applied, Applier, ChangeError, Options};
use crate::session::{CharacterId, Session};

impl Session {
    /// Applies `batch` to the open character `id`, its `competing` picks left out while it runs.
    /// On success the session holds the new file, its picks as they were ([`Session::file`]); on
    /// failure it is brought back to the file it held before.
    #[tracing::instrument(name = "session.apply", level = "info", skip_all, fields(character = ?id, changes = batch.len()))]
    pub fn apply(
        &mut self,
        id: CharacterId,
        batch: &[Change],
        options: Options<'_>,
    ) -> Result<Applied, ChangeError> {
        let original = match self.file(id) {
            Ok(file) => file.clone(),
            Err(e) => return Err(ChangeError::new("unknown-character", "", e.to_string())),
        };
        // The picks among competing options reach only computeSheet (EF "Competing options":
        // applyChanges uses each group's recommended option): the batch runs on the file without
        // them, and the file it makes carries them again.
        let mut working = original.clone();
        let picks = std::mem::take(&mut working.competing);
        if !picks.is_empty() {
            let _ = self.update(id, &working);
        }
        let applier = Applier::new(self, id, working, options);
        match applier.run(batch) {
            Ok(mut applied) => {
                if !picks.is_empty() {
                    applied.character.competing = picks;
                    let _ = self.update(id, &applied.character);
                }
                Ok(applied)
            }
            Err(error) => {
                let _ = self.update(id, &original);
                Err(error)
            }
        }
    }
}
