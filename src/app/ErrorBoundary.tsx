/**
 * Whatever a part of the page throws while it draws (a run whose data no view expected, a value nested too deep to
 * print) is caught here and shown, with the error's words, instead of blanking the page: the views have one (the
 * set-up form stays usable beside them), and the whole page has one (its fallback can reload the lab without the
 * link that brought it). Errors of event handlers and promises are not React's to catch: the page's own code
 * catches and shows those.
 */

import { Component, type ErrorInfo, type ReactNode } from "react";

interface Props {
  /** What failed, in words ("the run's views"). */
  where: string;
  children: ReactNode;
  /** A change of this value (another run shown) draws the children again. */
  resetKey?: unknown;
  /** Extra ways out, beside "Try again". */
  actions?: (reset: () => void) => ReactNode;
  testId?: string;
}

interface State {
  error: Error | null;
}

export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: unknown): State {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error(`rollout-lab: ${this.props.where} failed:`, error, info.componentStack);
  }

  override componentDidUpdate(prev: Props): void {
    if (this.state.error && prev.resetKey !== this.props.resetKey) this.setState({ error: null });
  }

  private reset = () => this.setState({ error: null });

  override render(): ReactNode {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <div className="error" role="alert" data-testid={this.props.testId ?? "page-error"}>
        <p>
          {this.props.where} failed: {error.name && error.name !== "Error" ? `${error.name}: ` : ""}
          {error.message}
        </p>
        <div className="row">
          <button className="secondary" onClick={this.reset}>
            Try again
          </button>
          {this.props.actions?.(this.reset)}
        </div>
      </div>
    );
  }
}
