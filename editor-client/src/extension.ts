/**
 * perf-lint for VS Code: starts the language server bundled with the extension (or the
 * environment's perf-lint) for Python files and Jupyter notebooks, isolated from the
 * workspace, passes the settings the user set to it, and adds the profiling commands.
 * Diagnostics, quick fixes, hover, code lenses and the profile code action come from the server.
 */

import * as os from "node:os";
import * as vscode from "vscode";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LSPErrorCodes,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State as ClientState,
} from "vscode-languageclient/node";
import { checkInterpreter, chooseInterpreter, type ImportStrategy, type Interpreter, serverCommand } from "./interpreter";
import { type Where, describeWhere, newestReport, outcomeOf, parseProfileArguments, PROFILE_COMMAND, profileArguments } from "./profile";
import { needsRestart, SECTION, type ServerSettings, serverSettings, setValues } from "./settings";
import { Status } from "./status";

const CONSENT_KEY = "perfLint.profilingAccepted";

/** The part of the Python extension's API used here (`ms-python.python`). */
interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
    resolveEnvironment(env: { id: string; path: string }): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
}

function firstFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

/** The `perfLint` values the user set for a scope (restricted ones: the user's only, when untrusted). */
function userValues(scope?: vscode.Uri, keys?: readonly string[]): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration(SECTION, scope ?? null);
  return setValues((key) => config.inspect(key), vscode.workspace.isTrusted, keys);
}

/** The server's settings for a scope (a folder URI or none). */
function settingsFor(scope?: vscode.Uri): ServerSettings {
  const folder = scope ? vscode.workspace.getWorkspaceFolder(scope) : firstFolder();
  return serverSettings(userValues(scope), { trusted: vscode.workspace.isTrusted, home: os.homedir(), workspaceFolder: folder?.uri.fsPath });
}

function folderPaths(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath);
}

/** The Python extension's API, or undefined where it is not installed (or fails to activate). */
async function pythonApi(): Promise<PythonApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonApi>("ms-python.python");
  try {
    return extension && (extension.isActive ? extension.exports : await extension.activate());
  } catch {
    return undefined;
  }
}

async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const environments = (await pythonApi())?.environments;
  if (!environments) return undefined;
  try {
    const active = environments.getActiveEnvironmentPath(firstFolder()?.uri);
    const resolved = await environments.resolveEnvironment(active);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  } catch {
    return undefined;
  }
}

class Server {
  private client: LanguageClient | undefined;
  private interpreter: Interpreter | undefined;
  private lastReport: string | undefined;
  private queue: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
    private readonly status: Status,
  ) {}

  /** Stops the running server (if any) and starts one as the settings say; calls are serialized. */
  restart(): Promise<void> {
    this.queue = this.queue.then(() => this.doRestart()).catch((error) => {
      this.output.error(`perf-lint: ${error}`);
    });
    return this.queue;
  }

  private async doRestart(): Promise<void> {
    await this.stop();
    if (!vscode.workspace.getConfiguration(SECTION).get<boolean>("enable", true)) {
      this.status.set("stopped", "Disabled by perfLint.enable.");
      return;
    }
    this.status.set("starting");
    const own = userValues(undefined, ["interpreter", "importStrategy"]);
    const strategy: ImportStrategy = own.importStrategy === "fromEnvironment" ? "fromEnvironment" : "useBundled";
    const interpreter = chooseInterpreter({
      setting: typeof own.interpreter === "string" ? own.interpreter : undefined,
      pythonExtension: await pythonExtensionInterpreter(),
      home: os.homedir(),
      workspaceFolder: firstFolder()?.uri.fsPath,
      trusted: vscode.workspace.isTrusted,
      workspaceFolders: folderPaths(),
    });
    this.interpreter = interpreter;
    if (interpreter.skipped) this.output.warn(`perf-lint: not using ${interpreter.skipped}`);
    this.output.info(`perf-lint: using ${interpreter.python} (from ${interpreter.source}), ${strategy === "useBundled" ? "bundled server" : "perf-lint from that environment"}`);
    const check = await checkInterpreter(interpreter.python, strategy, this.context.extensionPath, { cwd: firstFolder()?.uri.fsPath });
    if (!check.ok) {
      this.status.set("error", check.message);
      this.output.error(check.message);
      void this.explain(check.message);
      return;
    }
    this.output.info(`perf-lint: Python ${check.python}, server ${check.version}`);
    const client = this.createClient(interpreter, strategy);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      const message = `perf-lint server did not start with ${interpreter.python}: ${error}`;
      this.output.error(message);
      this.status.set("error", message);
      void vscode.window.showErrorMessage(message, "Show Output").then((choice) => choice && this.output.show());
    }
  }

  private async explain(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, "Choose Interpreter", "Show Output");
    if (choice === "Choose Interpreter") {
      await vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.interpreter`);
    } else if (choice === "Show Output") {
      this.output.show();
    }
  }

  private createClient(interpreter: Interpreter, strategy: ImportStrategy): LanguageClient {
    const { command, args } = serverCommand(interpreter.python, strategy, this.context.extensionPath);
    const serverOptions: ServerOptions = { command, args, options: { cwd: firstFolder()?.uri.fsPath } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
        { notebook: "jupyter-notebook", language: "python" },
      ],
      outputChannel: this.output,
      initializationOptions: { [SECTION]: settingsFor() },
      synchronize: { configurationSection: SECTION },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          if (this.stopping) return { action: CloseAction.DoNotRestart, handled: true };
          const message = "perf-lint server stopped unexpectedly; see the output for its log. Run 'perf-lint: Restart server' to start it again.";
          this.status.set("error", message);
          void vscode.window.showErrorMessage(message, "Show Output").then((choice) => choice && this.output.show());
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const values = await next(params, token);
            if (!Array.isArray(values)) return values;
            return values.map((value, index) => {
              const item = params.items[index];
              const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
              return item.section === SECTION ? settingsFor(scope) : value;
            });
          },
          // The server re-reads its settings through workspace/configuration on this notification.
          didChangeConfiguration: async () => {
            try {
              await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { [SECTION]: settingsFor() } });
            } catch (error) {
              if (client === this.client) throw error; // else the change restarts the server: this one is stopping
            }
          },
        },
        executeCommand: async (command, args, next) => {
          if (command !== PROFILE_COMMAND) return next(command, args);
          return this.profile(client, args);
        },
        window: {
          // A report opens rendered, not as Markdown source.
          showDocument: async (params, token, next) => {
            if (!params.uri.endsWith(".md")) return next(params, token);
            await vscode.commands.executeCommand("markdown.showPreview", vscode.Uri.parse(params.uri));
            return { success: true };
          },
        },
      },
    };
    const client = new LanguageClient("perf-lint", "perf-lint", serverOptions, clientOptions);
    client.onDidChangeState(({ newState }) => {
      const detail = `${interpreter.python} (${interpreter.source})`;
      if (newState === ClientState.Running) this.status.set("running", detail);
      else if (newState === ClientState.Starting) this.status.set("starting", detail);
      else if (this.stopping) this.status.set("stopped", detail);
    });
    return client;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    this.stopping = true;
    try {
      await client.stop(5000);
    } catch (error) {
      this.output.warn(`perf-lint: stopping the server: ${error}`);
    } finally {
      this.stopping = false;
      this.status.set("stopped");
    }
  }

  /**
   * Runs the server's profile command: trusted workspaces only, after the user agreed once,
   * with a notification whose Cancel stops the run (the server kills the profiled process).
   */
  private async profile(client: LanguageClient, args: unknown[]): Promise<unknown> {
    if (!vscode.workspace.isTrusted) {
      const choice = await vscode.window.showWarningMessage(
        "perf-lint: profiling runs your code, so it is disabled in untrusted workspaces.",
        "Manage Workspace Trust",
      );
      if (choice) await vscode.commands.executeCommand("workbench.trust.manage");
      return undefined;
    }
    const { uri, where } = parseProfileArguments(args);
    const settings = settingsFor(uri ? vscode.Uri.parse(uri) : undefined);
    if (!settings.profiling.enabled) {
      void vscode.window.showInformationMessage("perf-lint: profiling is off (setting perfLint.profiling.enabled).");
      return undefined;
    }
    if (!(await this.consent(uri, where, settings))) return undefined;
    this.status.setVerdict("profiling…");
    const title = `perf-lint: profiling ${describeWhere(where) || "the file"} (as written, then with the fix)`;
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        (_progress, token) => client.sendRequest(ExecuteCommandRequest.type, { command: PROFILE_COMMAND, arguments: args }, token),
      );
      const outcome = outcomeOf(result);
      if (outcome.report) this.lastReport = outcome.report;
      this.status.setVerdict(outcome.verdict ?? "done");
      this.output.info(`perf-lint profile: ${outcome.verdict ?? "no verdict"}${outcome.report ? ` (report: ${outcome.report})` : ""}`);
      return outcome;
    } catch (error) {
      const cancelled = (error as { code?: number }).code === LSPErrorCodes.RequestCancelled;
      this.status.setVerdict(cancelled ? "profile cancelled" : "profile failed");
      const message = error instanceof Error ? error.message : String(error);
      if (cancelled) this.output.info("perf-lint profile: cancelled");
      else {
        this.output.error(`perf-lint profile failed: ${message}`);
        void vscode.window.showErrorMessage(`perf-lint profile failed: ${message}`);
      }
      return undefined;
    }
  }

  private async consent(uri: string | undefined, where: Where, settings: ServerSettings): Promise<boolean> {
    if (this.context.workspaceState.get<boolean>(CONSENT_KEY)) return true;
    const file = uri ? vscode.Uri.parse(uri).fsPath : "the active file";
    const place = describeWhere(where);
    const python =
      settings.profiling.runner === "ray"
        ? `a Ray task on ${settings.profiling.rayAddress ?? "the Ray cluster of RAY_ADDRESS or this machine"}`
        : settings.profiling.python ?? this.interpreter?.python ?? "the server's Python";
    const choice = await vscode.window.showInformationMessage(
      "perf-lint will run your code to measure it.",
      {
        modal: true,
        detail:
          `It runs ${file}${place ? ` (${place})` : ""} twice, as written and with the fix, under torch.profiler, ` +
          `with ${python}. Only when you ask; this workspace will not ask again.`,
      },
      "Run",
    );
    if (choice !== "Run") return false;
    await this.context.workspaceState.update(CONSENT_KEY, true);
    return true;
  }

  /** "perf-lint: Profile this cell": the active notebook cell, else the cursor's line (its `# %%` cell). */
  async profileCell(): Promise<void> {
    const notebook = vscode.window.activeNotebookEditor;
    const editor = vscode.window.activeTextEditor;
    let args: unknown[] | undefined;
    if (notebook) {
      const cells = notebook.notebook.getCells();
      const cell = cells.find((c) => c.document === editor?.document) ?? cells[notebook.selection.start];
      if (cell?.kind === vscode.NotebookCellKind.Code) args = profileArguments(notebook.notebook.uri.toString(), { cell: cell.index });
    } else if (editor?.document.languageId === "python") {
      args = profileArguments(editor.document.uri.toString(), { line: editor.selection.active.line });
    }
    if (!args) {
      void vscode.window.showInformationMessage("perf-lint: select a notebook code cell or put the cursor in a Python file to profile.");
      return;
    }
    if (!this.client?.isRunning()) {
      void vscode.window.showErrorMessage("perf-lint: the server is not running (see 'perf-lint: Show output').");
      return;
    }
    await vscode.commands.executeCommand(PROFILE_COMMAND, ...args);
  }

  async showReport(): Promise<void> {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const report = this.lastReport ?? newestReport(folders);
    if (!report) {
      void vscode.window.showInformationMessage("perf-lint: no profile report yet. Run 'perf-lint: Profile this cell' first.");
      return;
    }
    const uri = vscode.Uri.file(report);
    try {
      await vscode.commands.executeCommand("markdown.showPreview", uri);
    } catch {
      await vscode.window.showTextDocument(uri, { preview: false });
    }
  }
}

let server: Server | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel("perf-lint", { log: true });
  const status = new Status();
  const current = new Server(context, output, status);
  server = current;
  context.subscriptions.push(
    output,
    status,
    vscode.commands.registerCommand("perf-lint.profileCell", () => current.profileCell()),
    vscode.commands.registerCommand("perf-lint.showReport", () => current.showReport()),
    vscode.commands.registerCommand("perf-lint.restart", () => current.restart()),
    vscode.commands.registerCommand("perf-lint.showOutput", () => output.show()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (needsRestart((section) => event.affectsConfiguration(section))) void current.restart();
    }),
    // Trust makes the workspace's interpreter settings count and allows profiling.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void current.restart()),
  );
  void pythonApi().then((api) => {
    const changed = api?.environments?.onDidChangeActiveEnvironmentPath;
    if (!changed) return;
    context.subscriptions.push(
      changed(() => {
        if (!vscode.workspace.getConfiguration(SECTION).get<string>("interpreter")) void current.restart();
      }),
    );
  });
  void current.restart();
}

export function deactivate(): Promise<void> | undefined {
  return server?.stop();
}
