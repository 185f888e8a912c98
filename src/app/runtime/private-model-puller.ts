import path from "node:path";
import { ModelPuller, type PullCall } from "../../models/model-puller.js";
import type { PullResult } from "../../models/pull-model.js";
import { ensurePrivateDir, tightenTree } from "../../shared/private-dir.js";

/**
 * A puller whose downloads stay private when models_dir is under data_dir (the default):
 * data_dir is made 0700 first and what the downloader wrote (with its own modes) is tightened to
 * 0700 folders / 0600 files after, partial files of a failed pull too. A models_dir elsewhere (shared models) is the
 * user's to set up and is left as it is.
 */
export class PrivateModelPuller extends ModelPuller {
  constructor(
    deps: ConstructorParameters<typeof ModelPuller>[0],
    private readonly dirs: { dataDir: string; modelsDir: string },
  ) {
    super(deps);
  }

  override async pull(call: PullCall): Promise<PullResult> {
    const { dataDir, modelsDir } = this.dirs;
    const relative = path.relative(path.resolve(dataDir), path.resolve(modelsDir));
    const underDataDir = relative !== "" && relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
    if (!underDataDir) return super.pull(call);
    // data_dir private before anything is written below it (the partial file is reachable by
    // nobody else while it grows); models/ itself is left to the download, so a refused pull
    // creates no folder. Failing here is left to the pull to report.
    await ensurePrivateDir(dataDir, dataDir).catch(() => undefined);
    try {
      return await super.pull(call);
    } finally {
      await tightenTree(modelsDir);
    }
  }
}
