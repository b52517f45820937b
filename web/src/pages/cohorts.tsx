export default function P() { return <h1>cohorts</h1> }
