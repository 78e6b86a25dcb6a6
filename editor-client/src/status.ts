/** The status bar item: server state and the last profiling verdict; a click shows the output. */

import * as vscode from "vscode";

export type State = "starting" | "running" | "stopped" | "error";

const ICONS: Record<State, string> = {
  starting: "$(sync~spin)",
  running: "$(pulse)",
  stopped: "$(circle-slash)",
  error: "$(error)",
};

export class Status implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("perf-lint.status", vscode.StatusBarAlignment.Right, 100);
  private state: State = "stopped";
  private detail = "";
  private verdict = "";

  constructor() {
    this.item.name = "perf-lint";
    this.item.command = "perf-lint.showOutput";
    this.render();
    this.item.show();
  }

  /** A new server state; `detail` says why (interpreter, error) in the tooltip. */
  set(state: State, detail = ""): void {
    this.state = state;
    this.detail = detail;
    this.render();
  }

  /** The last profiling verdict, shown next to the state until the next one. */
  setVerdict(verdict: string): void {
    this.verdict = verdict;
    this.render();
  }

  private render(): void {
    this.item.text = `${ICONS[this.state]} perf-lint${this.verdict ? `: ${this.verdict}` : ""}`;
    const lines = [`perf-lint server: ${this.state}`];
    if (this.detail) lines.push(this.detail);
    if (this.verdict) lines.push(`Last profile: ${this.verdict}`);
    lines.push("Click to show the output.");
    this.item.tooltip = lines.join("\n");
    this.item.accessibilityInformation = { label: `perf-lint server ${this.state}${this.verdict ? `, last profile ${this.verdict}` : ""}` };
    this.item.backgroundColor = this.state === "error" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
