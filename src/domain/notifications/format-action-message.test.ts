import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatActionMessage, type ActionMessageInput } from './format-action-message.ts'

// The inputs of PostHog's own formatter tests (plugin-server action-webhook-formatter.test.ts), with the
// outputs its formatter gives: the two Slack cases are PostHog's recorded snapshots, the others follow its code.
const event: ActionMessageInput['event'] = {
  uuid: '123',
  event: '$pageview',
  distinctId: 'WALL-E',
  timestamp: '2021-10-31T00%3A44%3A00.000Z',
  properties: { $browser: 'Chrome' },
  personProperties: { email: 'test@posthog.com' },
  groups: {
    organization: { index: 1, key: '123', properties: { name: 'PostHog', plan: 'paid' } },
    project: { index: 2, key: '234', properties: {} },
  },
}
const base: ActionMessageInput = {
  webhookUrl: 'https://example.com/',
  messageFormat: 'User [person] did [action.name]',
  action: { id: 1, name: 'action1' },
  event,
  projectId: 123,
  siteUrl: 'http://localhost:8000',
}
const text = (over: Partial<ActionMessageInput>) => formatActionMessage({ ...base, ...over }).text
const person = '[test@posthog.com](http://localhost:8000/project/123/person/WALL-E)'

test('markdown webhooks: every token of PostHog\'s test cases', () => {
  const cases: Array<[string, string]> = [
    ['[person]', person],
    ['[person.link]', 'http://localhost:8000/project/123/person/WALL-E'],
    ['[user.name]', person],
    ['[user.browser]', 'Chrome'],
    ['[action.name]', '[action1](http://localhost:8000/project/123/action/1)'],
    ['[action.link]', 'http://localhost:8000/project/123/action/1'],
    ['[action.name] was done by [user.name]', `[action1](http://localhost:8000/project/123/action/1) was done by ${person}`],
    ['[action.name\\] got done by \\[user.name\\]', '[action.name] got done by [user.name]'],
    ['[event]', '[$pageview](http://localhost:8000/project/123/events/123/2021-10-31T00%253A44%253A00.000Z)'],
    ['[event.link]', 'http://localhost:8000/project/123/events/123/2021-10-31T00%253A44%253A00.000Z'],
    ['[event.uuid]', '123'],
    ['[event.name]', '$pageview'],
    ['[event.event]', '$pageview'],
    ['[event.distinct_id]', 'WALL-E'],
    ['[event.timestamp]', '2021-10-31T00%3A44%3A00.000Z'],
    ['[user.missing_property]', 'undefined'],
    // PostHog's group tokens (its WebhookFormatter snapshots).
    ['[groups]', 'NOT SUPPORTED'],
    ['[groups.missing]', "(event without 'missing')"],
    ['[groups.organization]', '[PostHog](http://localhost:8000/project/123/groups/1/123)'],
    ['[groups.organization.properties.plan]', 'paid'],
    ['[groups.project]', '[234](http://localhost:8000/project/123/groups/2/234)'],
    ['[groups.organization.link]', 'http://localhost:8000/project/123/groups/1/123'],
    ['[groups.organization.properties.missing]', 'undefined'],
  ]
  for (const [messageFormat, expected] of cases) assert.equal(text({ messageFormat }), expected, messageFormat)
})

test('person display name, person properties of every type, nested event properties', () => {
  assert.equal(
    text({ messageFormat: '[person]', event: { ...event, personProperties: { imię: 'Grzegorz', nazwisko: 'Brzęczyszczykiewicz' } }, personDisplayNameProperties: ['nazwisko'] }),
    '[Brzęczyszczykiewicz](http://localhost:8000/project/123/person/WALL-E)',
  )
  assert.equal(text({ messageFormat: '[person.properties.enjoys_broccoli_on_pizza]', event: { ...event, personProperties: { enjoys_broccoli_on_pizza: false } } }), 'false')
  // PostHog's markdown escaping leaves a bracket at the start of a line alone.
  assert.equal(
    text({ messageFormat: '[person.properties.pizza_ingredient_ranking]', event: { ...event, personProperties: { pizza_ingredient_ranking: ['pineapple', 'broccoli', 'aubergine'] } } }),
    '["pineapple","broccoli","aubergine"\\]',
  )
  assert.equal(
    text({
      messageFormat: '[user.name] from [user.browser] on [event.properties.page_title] page with [event.properties.fruit], [event.properties.with space]',
      event: { ...event, distinctId: '2', properties: { $browser: 'Chrome', page_title: 'Pricing', 'with space': 'yes sir' } },
    }),
    '[test@posthog.com](http://localhost:8000/project/123/person/2) from Chrome on Pricing page with undefined, yes sir',
  )
  assert.equal(text({ messageFormat: '[event.properties.a.b]', event: { ...event, properties: { a: { b: 7 } } } }), '7')
  // No display-name property: the distinct id.
  assert.equal(text({ messageFormat: '[person]', event: { ...event, personProperties: {} } }), '[WALL-E](http://localhost:8000/project/123/person/WALL-E)')
})

test('group tokens: escaping, a key that needs encoding in the link, Slack links, an event without groups', () => {
  const acme = { index: 0, key: 'acme/[eu]', properties: { name: 'Acme_*Corp*', nested: { tier: 2 } } }
  const withGroup = { ...event, groups: { company: acme } }
  assert.equal(text({ messageFormat: '[groups.company]', event: withGroup }), '[Acme\\_\\*Corp\\*](http://localhost:8000/project/123/groups/0/acme%2F%5Beu%5D)')
  assert.equal(text({ messageFormat: '[groups.company.properties.nested.tier] seats', event: withGroup }), '2 seats')
  const slack = formatActionMessage({ ...base, webhookUrl: 'https://hooks.slack.com/services/1/2/3', messageFormat: '[groups.company]', event: withGroup })
  assert.equal(slack.text, 'Acme_*Corp*')
  assert.equal(slack.blocks![0]!.text.text, '<http://localhost:8000/project/123/groups/0/acme%2F%5Beu%5D|Acme_*Corp*>')
  const { groups: _none, ...withoutGroups } = event
  assert.equal(text({ messageFormat: 'in [groups.company]', event: withoutGroups }), "in (event without 'company')")
})

test('markdown escaping of names and links', () => {
  assert.equal(
    text({ messageFormat: '[event]', event: { ...event, uuid: '**)', event: 'text](yes!), [new link' } }),
    '[text\\]\\(yes\\!\\), \\[new link](http://localhost:8000/project/123/events/\\*\\*\\)/2021-10-31T00%253A44%253A00.000Z)',
  )
})

test('Slack webhooks: text plus a mrkdwn block, as PostHog\'s snapshots', () => {
  const slack = (over: Partial<ActionMessageInput>) => formatActionMessage({ ...base, webhookUrl: 'https://hooks.slack.com/services/123/456/789', ...over })
  const a = slack({ messageFormat: '[action.name]' })
  assert.equal(a.text, 'action1')
  assert.deepEqual(a.blocks, [{ type: 'section', text: { type: 'mrkdwn', text: '<http://localhost:8000/project/123/action/1|action1>' } }])
  const e = slack({ messageFormat: '[event]', event: { ...event, uuid: '**>)', event: 'text><new link' } })
  assert.equal(e.text, 'text&gt;&lt;new link')
  assert.equal(e.blocks![0]!.text.text, '<http://localhost:8000/project/123/events/**%3E)/2021-10-31T00%253A44%253A00.000Z|text&gt;&lt;new link>')
  const p = slack({ messageFormat: '[person]' })
  assert.equal(p.text, 'test@posthog.com')
  assert.equal(p.blocks![0]!.text.text, '<http://localhost:8000/project/123/person/WALL-E|test@posthog.com>')
})

test('an empty template is PostHog\'s default; an unknown token gives PostHog\'s error message', () => {
  assert.equal(text({ messageFormat: '' }), `[action1](http://localhost:8000/project/123/action/1) was triggered by ${person}`)
  assert.equal(text({ messageFormat: null }), `[action1](http://localhost:8000/project/123/action/1) was triggered by ${person}`)
  assert.equal(
    text({ messageFormat: 'hi [unknown.token]' }),
    '*⚠ Error: There are one or more formatting errors in the message template for action "[action1](http://localhost:8000/project/123/action/1)".*',
  )
})
