// Retry, cancel and fail for one build, in a list row and on the build's page. Cancel is offered while
// the build is pending or running, fail while it runs (what GitLab's stuck-build sweep does to a build
// its runner abandoned), retry once it has finished (the server refuses the others with 409, whose
// message is shown here in case the build moved on since the last refresh). Cancel and fail ask first:
// neither can be undone.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { BuildView } from '../../api/client.ts';
import { useClient } from '../../app/client-context.tsx';

const ACTIVE: BuildView['status'][] = ['pending', 'running'];

export function BuildActions({ build, onRetried, wide }: { build: BuildView; onRetried?: (b: BuildView) => void; wide?: boolean }) {
  const client = useClient();
  const qc = useQueryClient();
  const refresh = (b: BuildView) => {
    qc.setQueryData(['build', b.id], b);
    void qc.invalidateQueries({ queryKey: ['builds'] });
  };
  const cancel = useMutation({ mutationFn: () => client.cancelBuild(build.id), onSuccess: refresh });
  const fail = useMutation({ mutationFn: () => client.failBuild(build.id), onSuccess: refresh });
  const retry = useMutation({
    mutationFn: () => client.retryBuild(build.id),
    onSuccess: (b) => {
      refresh(b);
      onRetried?.(b);
    },
  });
  const error = (cancel.error ?? fail.error ?? retry.error) as Error | null;
  const active = ACTIVE.includes(build.status);

  return (
    <span className="build-actions">
      {active ? (
        <>
          <button
            className={wide ? 'danger' : 'ghost danger small'}
            onClick={() => confirm(`Cancel build #${build.id}? Its runner is told to stop when it next sends its trace.`) && cancel.mutate()}
            disabled={cancel.isPending}
            aria-label={`Cancel build #${build.id}`}
            data-testid="build-cancel"
          >
            {wide ? 'Cancel build' : 'Cancel'}
          </button>
          {build.status === 'running' && (
            <button
              className={wide ? 'danger' : 'ghost danger small'}
              onClick={() => confirm(`Mark build #${build.id} as failed? For a build whose runner died mid-build; a runner that comes back hears it is no longer running.`) && fail.mutate()}
              disabled={fail.isPending}
              aria-label={`Fail build #${build.id}`}
              data-testid="build-fail"
            >
              {wide ? 'Fail build' : 'Fail'}
            </button>
          )}
        </>
      ) : (
        <button className={wide ? '' : 'ghost small'} onClick={() => retry.mutate()} disabled={retry.isPending} aria-label={`Retry build #${build.id}`} data-testid="build-retry">
          {wide ? 'Retry build' : 'Retry'}
        </button>
      )}
      {error && <span className="error small" role="alert">{error.message}</span>}
    </span>
  );
}
