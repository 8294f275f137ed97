//! TODO(helper): this experiment is being built; until then it reports that it is not built.

use crate::{Output, ReproduceOptions};

pub fn run(_opts: &ReproduceOptions) -> anyhow::Result<Output> {
    anyhow::bail!("experiment `ioa_ftl` is not built yet")
}
