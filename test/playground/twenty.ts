// A model of 20 types for the graph's readability test and screenshot: organizations, teams,
// repositories, documents, calendars and tickets, with every rewrite kind.

export const TWENTY_TYPES = `model
  schema 1.1

type user

type service_account

type organization
  relations
    define owner: [user]
    define admin: [user, team#member] or owner
    define member: [user, service_account, team#member] or admin
    define billing_manager: [user] and member

type team
  relations
    define parent_org: [organization]
    define maintainer: [user] or admin from parent_org
    define member: [user, team#member] or maintainer

type repository
  relations
    define owner: [organization]
    define admin: [user, team#member] or admin from owner
    define maintainer: [user, team#member] or admin
    define writer: [user, team#member, service_account] or maintainer
    define reader: [user, team#member, user:*] or writer or member from owner
    define banned: [user]
    define can_read: reader but not banned

type branch
  relations
    define repo: [repository]
    define protected_by: [user]
    define can_push: writer from repo but not protected_by

type pull_request
  relations
    define repo: [repository]
    define author: [user]
    define reviewer: [user, team#member]
    define can_merge: maintainer from repo or (reviewer and writer from repo)

type issue
  relations
    define repo: [repository]
    define assignee: [user]
    define can_edit: assignee or writer from repo
    define can_view: can_read from repo

type folder
  relations
    define owner: [user]
    define parent: [folder]
    define editor: [user, team#member] or owner or editor from parent
    define viewer: [user, team#member, user:*] or editor or viewer from parent

type document
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, team#member] or owner or editor from parent
    define commenter: [user] or editor
    define viewer: [user, user:*] or commenter or viewer from parent
    define blocked: [user]
    define can_view: viewer but not blocked

type spreadsheet
  relations
    define parent: [folder]
    define editor: [user] or editor from parent
    define viewer: [user] or editor or viewer from parent

type drive
  relations
    define org: [organization]
    define manager: [user] or admin from org
    define member: [user] or manager or member from org

type calendar
  relations
    define owner: [user]
    define delegate: [user] or owner
    define reader: [user, team#member] or delegate

type event
  relations
    define calendar: [calendar]
    define organizer: [user]
    define attendee: [user, team#member] or organizer
    define can_view: attendee or reader from calendar

type project
  relations
    define org: [organization]
    define lead: [user]
    define contributor: [user, team#member] or lead
    define viewer: contributor or member from org

type ticket
  relations
    define project: [project]
    define reporter: [user]
    define assignee: [user]
    define can_edit: assignee or reporter or contributor from project
    define can_view: can_edit or viewer from project

type secret
  relations
    define repo: [repository]
    define reader: [service_account] and writer from repo

type workflow
  relations
    define repo: [repository]
    define runner: [service_account]
    define can_run: runner or maintainer from repo

type audit_log
  relations
    define org: [organization]
    define viewer: billing_manager from org or owner from org

type webhook
  relations
    define repo: [repository]
    define can_configure: admin from repo
`;
