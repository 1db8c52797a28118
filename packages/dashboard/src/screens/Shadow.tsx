/**
 * Shadow sessions screen (contract §2.14, §3.4, §4.17; design §8.8, §8.20): start a session for an
 * agent, skill and decision class; every session with its level, evidence and progress on the
 * three graduation gates, Graduate and Demote (shadow/ShadowSessionCard.tsx). Updates live from
 * `shadow_*` socket events.
 */
import { SHADOW_DEFAULT_CONFIG, type ShadowConfigInput } from '@parley/sdk';
import { useState, type FormEvent } from 'react';
import { useOwner } from '../app/owner-context';
import { AgentPicker } from './parts/AgentSelect';
import { Empty, ErrorNote, Loading, Section } from '../components/ui';
import { agentLabel, useAgents, type AgentEntry } from '../lib/agents';
import { useDraft } from '../lib/drafts';
import { useRootMutation } from '../lib/mutate';
import { usePaged } from '../lib/paging';
import { configFromDraft } from '../lib/shadow-view';
import { Field, LoadMore } from './form-parts';
import { ShadowSessionCard } from './shadow/ShadowSessionCard';

function StartSession({ agents }: { agents: AgentEntry[] }) {
  const { client } = useOwner();
  const [agent, setAgent, clearAgent] = useDraft('shadow.new.agent');
  const [skill, setSkill, clearSkill] = useDraft('shadow.new.skill');
  const [klass, setKlass, clearKlass] = useDraft('shadow.new.class');
  const [minObs, setMinObs, clearMinObs] = useDraft('shadow.new.min');
  const [agree, setAgree, clearAgree] = useDraft('shadow.new.agreement');
  const [hours, setHours, clearHours] = useDraft('shadow.new.hours');
  const [invalid, setInvalid] = useState<unknown>();
  const create = useRootMutation('shadow', (config: ShadowConfigInput | undefined) =>
    client.createShadowSession({ device_id: agent, skill_name: skill.trim(), decision_class: klass.trim(), ...(config ? { config } : {}) }),
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    let config: ShadowConfigInput | undefined;
    try {
      config = configFromDraft({ minObservations: minObs, agreementPercent: agree, windowHours: hours });
    } catch (err) {
      setInvalid(err);
      return;
    }
    setInvalid(undefined);
    create.mutate(config, { onSuccess: () => [clearAgent, clearSkill, clearKlass, clearMinObs, clearAgree, clearHours].forEach((c) => c()) });
  };
  const active = agents.filter((a) => a.status !== 'REVOKED');
  return (
    <Section title="Start a shadow session">
      <p className="muted" style={{ margin: 0 }}>
        The agent recommends, a person decides; the session graduates to supervised, then autonomous, only when you press Graduate with every gate met.
      </p>
      <form className="stack" onSubmit={submit}>
        <div className="fields">
          <Field label="Agent">
            {(id) => <AgentPicker id={id} agents={active} value={agent} onChange={setAgent} required />}
          </Field>
          <Field label="Skill" hint="The capability evaluated, e.g. refunds">
            {(id, hint) => <input id={id} aria-describedby={hint} value={skill} onChange={(e) => setSkill(e.target.value)} required maxLength={200} />}
          </Field>
          <Field label="Decision class" hint="The type of decision, e.g. approve-refund">
            {(id, hint) => <input id={id} aria-describedby={hint} value={klass} onChange={(e) => setKlass(e.target.value)} required maxLength={200} />}
          </Field>
        </div>
        <details>
          <summary>Graduation gates (optional)</summary>
          <div className="fields">
            <Field label="Minimum observations" hint={`Default ${SHADOW_DEFAULT_CONFIG.min_observations}`}>
              {(id, hint) => <input id={id} aria-describedby={hint} inputMode="numeric" value={minObs} onChange={(e) => setMinObs(e.target.value)} />}
            </Field>
            <Field label="Agreement threshold (%)" hint={`Default ${SHADOW_DEFAULT_CONFIG.agreement_threshold * 100}`}>
              {(id, hint) => <input id={id} aria-describedby={hint} inputMode="decimal" value={agree} onChange={(e) => setAgree(e.target.value)} />}
            </Field>
            <Field label="Critical-miss window (hours)" hint={`Default ${SHADOW_DEFAULT_CONFIG.critical_miss_window_hours}`}>
              {(id, hint) => <input id={id} aria-describedby={hint} inputMode="decimal" value={hours} onChange={(e) => setHours(e.target.value)} />}
            </Field>
          </div>
        </details>
        <div>
          <button type="submit" className="primary" disabled={create.isPending}>
            Start session
          </button>
        </div>
        <ErrorNote error={invalid ?? create.error} />
        {create.isSuccess && <p role="status">Session started for {create.data.skill_name}.</p>}
      </form>
    </Section>
  );
}

/** The Shadow sessions screen (contract §4.17; design §8.8, §8.20). */
export function Shadow() {
  const { client } = useOwner();
  const { agents, error: agentsError } = useAgents();
  const sessions = usePaged(
    ['shadow', 'sessions'],
    (cursor) => client.listShadowSessions({ limit: 50, ...(cursor ? { cursor } : {}) }),
    (p) => p.sessions,
  );
  const list = sessions.items;
  return (
    <>
      <h1>Shadow sessions</h1>
      <ErrorNote error={agentsError} />
      {agents && (agents.length === 0 ? <Empty>No agents yet: enroll an agent first, then evaluate it here.</Empty> : <StartSession agents={agents} />)}
      <Section title="Sessions">
        <ErrorNote error={sessions.error} />
        {sessions.isPending && <Loading what="Loading sessions" />}
        {!sessions.isPending && !sessions.error && list.length === 0 && <Empty>No shadow sessions yet.</Empty>}
        <ul className="stack" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {list.map((s) => (
            <ShadowSessionCard key={s.session_id} session={s} agentName={agentLabel(agents, s.device_id)} />
          ))}
        </ul>
        <div>
          <LoadMore paged={sessions} what="sessions" />
        </div>
      </Section>
    </>
  );
}
